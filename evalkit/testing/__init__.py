"""Test helpers: a real local OpenAI / Azure OpenAI chat-completions server (see ``evalkit.testing.server``).

    from evalkit.testing import ModelServer, Reply, heuristic_judge

pytest: ``pytest_plugins = ["evalkit.testing.pytest_plugin"]`` gives the ``model_server`` fixture.
"""

from __future__ import annotations

from evalkit.testing.server import ModelServer, Reply, heuristic_judge

__all__ = ["ModelServer", "Reply", "heuristic_judge"]
