"""Keys go only where the user configured them: an eval document cannot choose an endpoint or a key.

Why: a document is input, often not the user's own (the CI recipe runs documents from pull requests). If a
document could name a judge endpoint and the environment variable holding its key (a jury juror's
``base_url`` and ``api_key_env``), evalkit would read ``GITHUB_TOKEN`` or ``AWS_SECRET_ACCESS_KEY`` and send
it as a bearer token to any host the document names. So endpoints, keys, key variables and every other
network destination (``base_url``, ``azure_endpoint``, ``api_base``, ``api_key``, ``api_key_env``,
headers, proxies, connections, webhooks) come only from the command line (``--evaluator``), the Python API
(``evaluate(evaluators=..., model_config=...)``), the environment and the user's own configuration files
(``.env``, ``.env.local``, the custom evaluators folder); a document that names one is refused, exit 2,
with the JSON path of the field and where such settings belong.

:func:`refuse_destinations` is the one check, called where a document's model configuration enters:
``case_cells.read_cells`` (every run, load, alignment and Spark document read goes through it) and
``evalkit validate``. It looks at names only, before anything is looked up, so the refusal is the same
whether a variable it names is set or not (no oracle). Evaluator maps are where a document configures
evaluators (options, juries), so that is where it looks: ``default_evaluators``, each item's and each
turn's ``evaluators``. Other document fields (citations with their URLs, metadata) configure nothing.

May import: ``evalkit.errors``, ``evalkit.documents.json_input`` (paths as messages show them).
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

from evalkit.documents.json_input import format_path
from evalkit.errors import DocumentError, shown

#: Words that make a field name a network destination or a key (matched against the words of the name:
#: ``base_url`` -> base, url; ``apiKeyEnv`` -> api, key, env; ``x-api-key`` -> x, api, key).
DESTINATION_WORDS = frozenset(
    {
        "url",
        "urls",
        "uri",
        "endpoint",
        "endpoints",
        "host",
        "hostname",
        "proxy",
        "proxies",
        "header",
        "headers",
        "webhook",
        "connection",
        "env",  # names an environment variable to read (api_key_env)
        "apikey",
        "key",  # but not a field called just "key" (see _is_destination)
        "token",
        "password",
        "passwd",
        "secret",
        "credential",
        "credentials",
        "authorization",
    }
)
#: Whole names that choose a destination without one of those words (``api_base``, ``baseurl``).
DESTINATION_NAMES = frozenset({"api_base", "apibase", "baseurl", "base_url", "openai_api_base"})

WHERE_THEY_BELONG = (
    "an eval document cannot choose where requests go or which key they carry; endpoints, keys and key "
    "variables come from the command line (--evaluator 'NAME={...}'), the Python API (evaluate(evaluators=..., "
    "model_config=...)), the environment (OPENAI_BASE_URL, OPENAI_API_KEY, AZURE_AI_OPENAI_ENDPOINT, ...) or "
    "your .env / .env.local file"
)

_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")
_NON_WORD = re.compile(r"[^0-9A-Za-z]+")


def _words(name: str) -> list[str]:
    return [w for w in _NON_WORD.split(_CAMEL.sub("_", name).lower()) if w]


@lru_cache(maxsize=4096)
def _is_destination(name: str) -> bool:
    words = _words(name)
    if words == ["key"]:  # a plain "key" names something (a field to read), not a key to send
        return False
    return (
        "_".join(words) in DESTINATION_NAMES
        or "".join(words) in DESTINATION_NAMES
        or any(w in DESTINATION_WORDS for w in words)
    )


def destination_fields(value: Any, path: tuple = ()) -> list[tuple]:
    """The JSON paths of every field in ``value`` (dicts and lists, any depth) that names a destination or a
    key, and of juror model names that are URLs, in order."""
    found: list[tuple] = []
    _find(value, path, found)
    return found


def _find(value: Any, path: tuple, found: list) -> None:
    if isinstance(value, dict):
        for name, inner in value.items():
            if type(name) is str and _is_destination(name):
                found.append((*path, name))
            elif name == "model" and type(inner) is str and "://" in inner:
                found.append((*path, name))  # a URL where a model name belongs
            elif isinstance(inner, (dict, list)) and inner:
                _find(inner, (*path, name), found)
    elif isinstance(value, list):
        jurors = bool(path) and path[-1] in ("jury", "jurors")
        for index, inner in enumerate(value):
            if jurors and type(inner) is str and "://" in inner:
                found.append((*path, index))
            elif isinstance(inner, (dict, list)) and inner:
                _find(inner, (*path, index), found)


def _evaluator_maps(doc: Any):
    """``(path, map)`` of every evaluator map a document holds."""
    if not isinstance(doc, dict):
        return
    if "default_evaluators" in doc:
        yield ("default_evaluators",), doc["default_evaluators"]
    items = doc.get("items")
    if not isinstance(items, list):
        return
    for index, item in enumerate(items):
        if not isinstance(item, dict):
            continue
        if "evaluators" in item:
            yield ("items", index, "evaluators"), item["evaluators"]
        turns = item.get("turns")
        if isinstance(turns, list):
            for number, turn in enumerate(turns):
                if isinstance(turn, dict) and "evaluators" in turn:
                    yield ("items", index, "turns", number, "evaluators"), turn["evaluators"]


def refuse_destinations(doc: Any, source: str) -> None:
    """Raise ``DocumentError`` (exit 2) when document ``doc`` (read from ``source``) names an endpoint, a key,
    a key variable or another network destination in any of its evaluator maps; every such field is listed
    by its JSON path."""
    found: list[tuple] = []
    for path, evaluators in _evaluator_maps(doc):
        _find(evaluators, path, found)
    if not found:
        return
    fields = [format_path(path) for path in found]
    raise DocumentError(
        f"{shown(source)}: {fields[0]}: {WHERE_THEY_BELONG}: remove "
        f"{'it' if len(fields) == 1 else 'these fields'} from the document",
        fields if len(fields) > 1 else None,
    )
