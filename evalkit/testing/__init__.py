"""Test helpers: a real local OpenAI / Azure OpenAI chat-completions server (see ``evalkit.testing.server``).

    from evalkit.testing import ModelServer, Reply, heuristic_judge

pytest: ``pytest_plugins = ["evalkit.testing.pytest_plugin"]`` gives the ``model_server`` fixture.

Modules: ``server`` (``ModelServer``: lifecycle, routes, script, records), ``protocol`` (request records and
the OpenAI / Azure response shapes), ``http_server`` (the HTTP/1.1 plumbing), ``faults`` (fault injection),
``batches`` (the Batch API: ``/v1/files``, ``/v1/batches``), ``answers`` (``Reply`` and the heuristic judge), ``rules`` (the rule-following judge and the optimiser that
``evalkit.align`` is tested with), ``labelled`` (a synthetic labelled set), ``pytest_plugin`` (the fixture), ``__main__``
(``python -m evalkit.testing``: the server as an offline judge until Ctrl-C, printing the variables to export).

May import: ``evalkit.judges``, ``evalkit.documents``, ``evalkit.errors``.
"""

from __future__ import annotations

from evalkit.testing.answers import Reply, heuristic_judge
from evalkit.testing.server import ModelServer

__all__ = ["ModelServer", "Reply", "heuristic_judge"]
