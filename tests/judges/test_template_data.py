"""Untrusted text reaches a ``.prompty`` only as data: Jinja's own lexer sees nothing but data in it.

``evalkit.judges.template_data`` is checked over generated payloads (every Jinja block start with every
whitespace-control modifier, mixed with arbitrary text), and the aligned prompt ``evalkit align`` writes is
checked to hold exactly the template tokens of the original prompt.
"""

from __future__ import annotations

import jinja2
from hypothesis import given, settings
from hypothesis import strategies as st

from evalkit.analysis.alignment.prompts import PromptSpec, render_prompt
from evalkit.judges.prompty import _ROLE, builtin_prompt
from evalkit.judges.template_data import template_data

#: promptflow renders a .prompty body with these settings (promptflow.core._prompty_utils).
ENV = jinja2.Environment(trim_blocks=True, keep_trailing_newline=True)

_JINJA_PIECES = st.sampled_from(
    [
        "{{", "}}", "{%", "%}", "{#", "#}", "{%+", "{%-", "-%}", "+%}", "{{-", "-}}", "{#-", "-#}", "{", "}",
        "%", "#", "-", "+", " ", "\n", "endraw", "raw", "7*7", "user:", "\nsystem:\n", "'", '"', "\\",
    ]
)  # fmt: skip
PAYLOADS = st.lists(st.one_of(_JINJA_PIECES, st.text(max_size=8)), max_size=30).map("".join)


def _non_data(source: str) -> list[tuple[str, str]]:
    return [(kind, value) for _, kind, value in ENV.lex(source) if kind != "data"]


def _newlines(text: str) -> str:
    """Jinja renders every line break of its data as ``\\n``."""
    return text.replace("\r\n", "\n").replace("\r", "\n")


@settings(max_examples=200, deadline=None)
@given(PAYLOADS, st.sampled_from(["", "a", "}", "%", "#", " ", ": "]))
def test_untrusted_text_lexes_as_data_only_and_renders_as_itself(payload, neighbour):
    """After any template text but a lone ``{`` (evalkit's templates put none before untrusted text)."""
    inert = template_data(payload)
    for source in (inert, neighbour + inert, "x " + inert + "\n"):
        assert _non_data(source) == [], source
        assert ENV.from_string(source).render() == _newlines(source)
    assert inert.replace("{ ", "{").replace("\uff1a", ":") == payload.replace("{ ", "{").replace(
        "\uff1a", ":"
    )


def test_every_block_start_and_modifier_is_broken():
    for start in ("{{", "{{-", "{{+", "{%", "{%-", "{%+", "{#", "{#-"):
        assert _non_data(template_data(start + " endraw " + start[::-1].replace("{", "}"))) == []
    assert template_data("{%+ endraw %}{{ 7*7 }}") == "{ %+ endraw %}{ { 7*7 }}"
    assert template_data("ends with {") == "ends with { " and template_data(None) == ""


@settings(max_examples=60, deadline=None)
@given(PAYLOADS, PAYLOADS, PAYLOADS, PAYLOADS)
def test_an_aligned_prompt_holds_exactly_the_template_tokens_of_the_original(
    prompt, response, guideline, criteria
):
    original = builtin_prompt("Relevance").path.read_text(encoding="utf-8")
    body = original.split("---\n", 2)[2]
    example = {"prompt": prompt, "response": response, "human": 3}
    for spec in (
        PromptSpec("guidelines+examples", (guideline,), (example,)),
        PromptSpec("criteria", (guideline,), (example,), criteria=criteria),
    ):
        aligned = render_prompt(original, spec).split("---\n", 2)[2]
        assert _non_data(aligned) == _non_data(body)
        assert [m.group(1) for m in _ROLE.finditer(aligned)] == [m.group(1) for m in _ROLE.finditer(body)]
