"""The judge model's part of a cache key holds neither the key nor the credentials in the URL's user part."""

from __future__ import annotations

from evalkit.evaluators.llm_judges.builtin import _model_identity


def test_rotating_url_credentials_keeps_the_cache_key():
    one = _model_identity({"base_url": "http://bot:first-pass-1@host/v1", "model": "judge", "api_key": "a"})
    two = _model_identity({"base_url": "http://bot:second-pass-2@host/v1", "model": "judge", "api_key": "b"})
    assert one == two == {"base_url": "http://***@host/v1", "model": "judge"}


def test_a_different_endpoint_is_a_different_identity():
    assert _model_identity({"base_url": "http://a/v1"}) != _model_identity({"base_url": "http://b/v1"})
