"""Untrusted text made inert for a Jinja template: the one way evalkit writes text it did not author into a
``.prompty``.

A ``.prompty`` body is a Jinja template (promptflow renders it with Jinja's default delimiters). Text evalkit
writes into one (the labelled examples, guidelines and criteria of ``evalkit align``: agent prompts and
responses, and an optimiser model's answer shaped by them) must reach the judge as the text itself, never as a
template expression: ``{{ 7*7 }}`` in a response stays ``{{ 7*7 }}``-like text, never ``49``, and never runs.
A ``{% raw %}`` block is not enough (``{%+ endraw %}``, ``{%- endraw -%}`` ... end it too), so
:func:`template_data` breaks every Jinja block start instead: a ``{`` followed by ``{``, ``%`` or ``#`` (a
variable, a statement or a comment, whatever whitespace-control modifier follows), or ending the text (where the
template's next character could complete it), gets a space after it. Jinja's lexer then sees only data in the
result, which renders as itself; a reader (or a model) still reads the same braces. Role-marker lines
(``user:`` ...) are neutralised as for judge inputs (``evalkit.judges.prompty.neutralise_role_markers``), so the
text cannot start a message either.

May import: ``evalkit.judges.prompty`` and the standard library.
"""

from __future__ import annotations

import re

from evalkit.judges.prompty import neutralise_role_markers

__all__ = ["template_data"]

#: A ``{`` that starts (or, at the end of the text, could start) a Jinja variable, statement or comment.
_BLOCK_START = re.compile(r"\{(?=[{%#]|\Z)")


def template_data(text: object) -> str:
    """``text`` as a string that a Jinja template renders as itself (module docs); None is ``""``."""
    value = "" if text is None else str(text)
    return _BLOCK_START.sub("{ ", neutralise_role_markers(value))
