"""pytest plugin: the ``model_server`` fixture, a fresh ``ModelServer`` on 127.0.0.1 (free port) per test.

Enable it with ``pytest_plugins = ["evalkit.testing.pytest_plugin"]`` in the root conftest.py (or a test
module). Loading it also sets ``PF_DISABLE_TRACING=true`` and ``PF_TRACING_SKIP_LOCAL_SETUP=true`` unless
they are already set, so promptflow neither traces nor launches its local trace service during tests (see
``evalkit.testing.server`` for what else keeps promptflow and azure-ai-evaluation off the network).

    def test_judge(model_server):
        config = {"azure_endpoint": model_server.azure_endpoint, "azure_deployment": "judge",
                  "api_key": "k", "api_version": "2024-12-01-preview"}
        ...
        assert model_server.request_count == 1
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from evalkit.judges.offline import quiet_llm_libraries
from evalkit.testing.server import ModelServer


def pytest_configure(config: pytest.Config) -> None:
    """Keep promptflow's tracing and telemetry off the network for the whole session."""
    quiet_llm_libraries()


@pytest.fixture
def model_server() -> Iterator[ModelServer]:
    """A started ModelServer answering with the heuristic judge; stopped after the test.

    Set ``model_server.script`` / ``latency``, or call ``fail_next`` / ``fail_randomly``, to change that.
    """
    with ModelServer() as server:
        yield server
