"""A small reader for ``.prompty`` files: YAML front matter, then a Jinja template with role markers.

evalkit uses it to render azure-ai-evaluation's own judge prompts without importing that package (about
2 s of imports) and to check custom judges' templates. It follows the reading rules of azure-ai-evaluation's
prompty implementation: the front matter is what stands between the first ``---`` line and the last one;
the body is rendered by a sandboxed Jinja environment (``trim_blocks``, ``keep_trailing_newline``) with the
declared inputs only; lines such as ``system:``, ``# user:`` or ``assistant:`` start messages, and each
message's text is stripped. A conformance test renders every built-in judge prompt both ways and compares.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache, lru_cache
from pathlib import Path
from typing import Any

_FRONT_MATTER = re.compile(r"-{3,}\n(.*)-{3,}\n(.*)", re.DOTALL)
_ROLE = re.compile(r"(?i)^\s*#?\s*(system|user|assistant|function)\s*:\s*\n", re.MULTILINE)
_VARIABLE = re.compile(r"{{-?\s*([A-Za-z_][A-Za-z0-9_]*)")


@dataclass(frozen=True)
class Prompty:
    path: Path
    front_matter: dict
    template: str

    @property
    def inputs(self) -> dict:
        return self.front_matter.get("inputs") or {}

    @property
    def parameters(self) -> dict:
        return dict((self.front_matter.get("model") or {}).get("parameters") or {})

    def variables(self) -> set[str]:
        """The ``{{ name }}`` variables the template uses."""
        return set(_VARIABLE.findall(self.template))

    def render(self, **values: Any) -> list[dict]:
        """Chat messages for ``values`` (only declared inputs are passed to the template)."""
        declared = {name: values.get(name, (spec or {}).get("default")) for name, spec in self.inputs.items()}
        text = _environment().from_string(self.template).render(**declared)
        parts = _ROLE.split(text)
        messages = []
        for role, content in zip(parts[1::2], parts[2::2]):
            messages.append({"role": role.strip().lower(), "content": content.strip()})
        return messages


def load(path: str | Path) -> Prompty:
    """Read a ``.prompty`` file; raises ValueError when it has no front matter."""
    import yaml

    source = Path(path)
    match = _FRONT_MATTER.search(source.read_text(encoding="utf-8"))
    if not match:
        raise ValueError(f"{source}: a .prompty file starts with YAML front matter between '---' lines")
    front, template = match.groups()
    return Prompty(source, yaml.safe_load(front) or {}, template)


@lru_cache(maxsize=1)
def _environment():
    from jinja2.sandbox import SandboxedEnvironment

    return SandboxedEnvironment(trim_blocks=True, keep_trailing_newline=True)


#: azure-ai-evaluation's judge prompts, by evaluator, relative to the installed package.
BUILTIN_PROMPTS = {
    "Relevance": "_evaluators/_relevance/relevance.prompty",
    "Coherence": "_evaluators/_coherence/coherence.prompty",
    "Similarity": "_evaluators/_similarity/similarity.prompty",
    "Groundedness": "_evaluators/_groundedness/groundedness_with_query.prompty",
}


@cache
def builtin_prompt(name: str) -> Prompty:
    """azure-ai-evaluation's prompt for built-in judge ``name``, found without importing that package."""
    import importlib.util

    spec = importlib.util.find_spec("azure.ai.evaluation")
    if spec is None or not spec.submodule_search_locations:
        raise ModuleNotFoundError("azure-ai-evaluation is not installed: pip install azure-ai-evaluation")
    return load(Path(list(spec.submodule_search_locations)[0]) / BUILTIN_PROMPTS[name])
