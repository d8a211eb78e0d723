"""Fixtures of the span tests: a judge model (ModelServer) configured in the environment."""

from __future__ import annotations

import pytest

#: The API key the judge_env fixture sets; tests check it is never written anywhere.
KEY = "sk-secret-judge-key-123"


@pytest.fixture
def judge_env(model_server, monkeypatch):
    """The ``model_server`` as the judge model of ``OPENAI_BASE_URL`` / ``OPENAI_API_KEY`` / ``OPENAI_MODEL``."""
    monkeypatch.setenv("OPENAI_BASE_URL", model_server.openai_base_url)
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    monkeypatch.setenv("OPENAI_MODEL", "judge")
    return model_server
