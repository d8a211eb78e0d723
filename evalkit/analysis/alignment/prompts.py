"""The text of an aligned judge prompt: the original ``.prompty`` with guidelines, examples and criteria changed.

A variant is a :class:`PromptSpec` over the original text: ``guidelines`` (rule lines distilled from the
disagreements), ``examples`` (labelled rows of the optimisation set shown as few-shot examples, with the human
score) and ``criteria`` (a rewritten instruction that replaces the text of the system message). They go into
the system message, in a block evalkit marks (``ALIGNED_MARK``) so the data the judge reads (the user message)
keeps its layout; a prompt without a system message gets one. The front matter, the inputs and the user message
are never changed, so the aligned prompt runs with the same wrapper and the same inputs.

Example texts come from the labelled rows (the agent's prompts and responses), guidelines and criteria from the
optimiser model (whose answer those rows shape): none of it is evalkit's, so all of it goes into the prompt
through ``evalkit.judges.template_data`` (the one place untrusted text is made inert for a template): it reaches
the judge as data, never as a Jinja expression (``{{ 7*7 }}`` in a response is never ``49``), and a line
``user:`` in it cannot start a message.

May import: ``evalkit.judges.prompty``, ``evalkit.judges.template_data`` and the standard library.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field

from evalkit.judges.prompty import _FRONT_MATTER, _ROLE
from evalkit.judges.template_data import template_data

__all__ = ["ALIGNED_MARK", "PromptSpec", "render_prompt", "sha256_of"]

#: The heading of the block evalkit adds to the system message.
ALIGNED_MARK = "# Guidelines from human labels (evalkit align)"
_EXAMPLES_MARK = "# Labelled examples (evalkit align)"
#: Longest example text kept (characters, per field), so a long response does not swell every judge call.
EXAMPLE_CHARS = 600


@dataclass(frozen=True)
class PromptSpec:
    """What a variant changes: ``guidelines`` lines, few-shot ``examples`` (dicts with ``prompt``,
    ``response``, ``human``) and a rewritten ``criteria`` (None: the original system text). ``kind`` names it."""

    kind: str = "original"
    guidelines: tuple[str, ...] = ()
    examples: tuple[dict, ...] = field(default=())
    criteria: str | None = None

    def describe(self) -> str:
        parts = []
        if self.criteria is not None:
            parts.append("rewritten criteria")
        if self.guidelines:
            parts.append(f"{len(self.guidelines)} guideline(s)")
        if self.examples:
            parts.append(f"{len(self.examples)} example(s)")
        return ", ".join(parts) or "the original prompt"


def sha256_of(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _safe(text: str) -> str:
    """Example text on one line, shortened, as template data (module docs)."""
    value = str(text if text is not None else "")
    if len(value) > EXAMPLE_CHARS:
        value = value[:EXAMPLE_CHARS].rstrip() + " ..."
    return template_data(" ".join(value.split()))


def _block(spec: PromptSpec) -> str:
    lines = []
    if spec.guidelines:
        lines += [ALIGNED_MARK, *(template_data(g) for g in spec.guidelines), ""]
    if spec.examples:
        lines += [_EXAMPLES_MARK]
        for number, example in enumerate(spec.examples, 1):
            lines += [
                f"Example {number}. Request: {_safe(example.get('prompt'))}",
                f"Answer given: {_safe(example.get('response'))}",
                f"Human verdict: {template_data(example['human'])}"
                if isinstance(example["human"], str)
                else f"Human score: {int(example['human'])}",
                "",
            ]
    return "\n".join(lines)


def render_prompt(original: str, spec: PromptSpec) -> str:
    """The ``.prompty`` text of ``spec`` applied to the ``original`` text (module docs)."""
    if not (spec.guidelines or spec.examples or spec.criteria is not None):
        return original
    text = original.replace("\r\n", "\n")
    match = _FRONT_MATTER.search(text)
    if not match:
        raise ValueError("a .prompty file starts with YAML front matter between '---' lines")
    body_start = match.start(2)
    head, body = text[:body_start], text[body_start:]
    block = _block(spec)
    roles = list(_ROLE.finditer(body))
    system = next((m for m in roles if m.group(1).lower() == "system"), None)
    if system is None:
        parts = [p.strip("\n") for p in (template_data(spec.criteria), block) if p.strip()]
        inserted = "system:\n" + "\n\n".join(parts) + "\n\n" if parts else ""
        return head + inserted + body
    after = [m for m in roles if m.start() > system.start()]
    end = after[0].start() if after else len(body)
    content = body[system.end() : end]
    if spec.criteria is not None:
        content = template_data(spec.criteria.strip()) + "\n"
    tail = body[end:]
    # The next role line's match starts at the blank lines before it: keep one blank line, not two.
    gap = "\n" if tail.startswith("\n") or not tail else "\n\n"
    content = content.rstrip("\n") + "\n\n" + (block.rstrip("\n") + gap if block else "")
    if not block:
        content = content.rstrip("\n") + gap
    return head + body[: system.end()] + content + tail
