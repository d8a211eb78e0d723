"""Judge model configuration, from explicit arguments, the environment, ``.env`` and ``.env.local``.

Azure OpenAI uses the upstream CLI's names (``AZURE_AI_OPENAI_ENDPOINT``, ``AZURE_AI_API_KEY``,
``AZURE_AI_API_VERSION``, ``AZURE_AI_MODEL_NAME``) or the common ``AZURE_OPENAI_*`` ones; any
OpenAI-compatible endpoint uses ``OPENAI_BASE_URL`` / ``OPENAI_API_KEY`` / ``OPENAI_MODEL``.
The returned dicts are shaped as the custom-evaluator seed says ``model_config`` is.
"""

from __future__ import annotations

import os
from pathlib import Path

from evalkit.documents.redaction import redact_url, register_secrets_of

DEFAULT_AZURE_API_VERSION = "2024-12-01-preview"

MISSING_JUDGE_MESSAGE = (
    "{what} needs a judge model, and none is configured. Set AZURE_AI_OPENAI_ENDPOINT, AZURE_AI_API_KEY "
    "and AZURE_AI_MODEL_NAME (Azure OpenAI; AZURE_AI_API_VERSION defaults to "
    f"{DEFAULT_AZURE_API_VERSION}), or OPENAI_BASE_URL, OPENAI_API_KEY and OPENAI_MODEL (any "
    "OpenAI-compatible endpoint), in the environment or in a .env / .env.local file in the project folder. "
    "To try it offline with no model or key, start evalkit's local model server (deterministic 1-5 answers): "
    "'python -m evalkit.testing > judge.env &', then 'source judge.env' and run again."
)


def _environment(project: Path | None = None) -> dict[str, str]:
    """The process environment over ``.env`` then ``.env.local`` (the environment wins)."""
    from dotenv import dotenv_values

    folder = project or Path.cwd()
    values: dict[str, str] = {}
    for name in (".env", ".env.local"):
        path = folder / name
        if path.is_file():
            values.update({k: v for k, v in dotenv_values(path).items() if v is not None})
    values.update(os.environ)
    return values


def judge_config(project: Path | None = None) -> dict | None:
    """The judge model configuration found in the environment, or None when there is none.

    Its key is registered for redaction (``evalkit.documents.redaction``), also when it comes from a
    ``.env`` file, so no message evalkit stores or prints can show it.
    """
    config = _judge_config(_environment(project))
    register_secrets_of(config)
    return config


def _judge_config(env: dict[str, str]) -> dict | None:
    endpoint = env.get("AZURE_AI_OPENAI_ENDPOINT") or env.get("AZURE_OPENAI_ENDPOINT")
    deployment = env.get("AZURE_AI_MODEL_NAME") or env.get("AZURE_OPENAI_DEPLOYMENT")
    if endpoint and deployment:
        config = {
            "azure_endpoint": endpoint,
            "azure_deployment": deployment,
            "api_version": env.get("AZURE_AI_API_VERSION")
            or env.get("OPENAI_API_VERSION")
            or DEFAULT_AZURE_API_VERSION,
        }
        key = env.get("AZURE_AI_API_KEY") or env.get("AZURE_OPENAI_API_KEY")
        if key:
            config["api_key"] = key
        return config
    base_url, model = env.get("OPENAI_BASE_URL"), env.get("OPENAI_MODEL")
    if base_url and model:
        return {"base_url": base_url, "model": model, "api_key": env.get("OPENAI_API_KEY", "")}
    return None


def describe(config: dict) -> str:
    """A one-line description of a judge configuration that never shows the key, nor credentials in the
    URL's user part (``http://***@host/v1``)."""
    if "azure_endpoint" in config:
        return f"Azure OpenAI {redact_url(config['azure_endpoint'])} deployment {config['azure_deployment']} (api {config['api_version']})"
    return f"OpenAI-compatible {redact_url(config['base_url'])} model {config['model']}"


def judge_client(config: dict, *, timeout: float = 120.0):
    """``(client, model)``: one openai client for a run's judge calls, keeping connections alive.

    Retries are the judge pool's (``max_retries=0``), so every 429 reaches its adaptive limit. Azure OpenAI
    without a key signs in with azure-identity's ``DefaultAzureCredential``.
    """
    import openai

    register_secrets_of(config)
    if "azure_endpoint" in config:
        options = {
            "azure_endpoint": config["azure_endpoint"],
            "api_version": config.get("api_version") or DEFAULT_AZURE_API_VERSION,
            "max_retries": 0,
            "timeout": timeout,
        }
        if config.get("api_key"):
            options["api_key"] = config["api_key"]
        else:
            from azure.identity import DefaultAzureCredential, get_bearer_token_provider

            scope = "https://cognitiveservices.azure.com/.default"
            options["azure_ad_token_provider"] = get_bearer_token_provider(DefaultAzureCredential(), scope)
        return openai.AzureOpenAI(**options), config["azure_deployment"]
    client = openai.OpenAI(
        base_url=config["base_url"], api_key=config.get("api_key") or "none", max_retries=0, timeout=timeout
    )
    return client, config["model"]
