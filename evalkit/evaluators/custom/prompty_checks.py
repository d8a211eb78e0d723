"""Load-time checks of a custom evaluator's ``.prompty`` and ``.py``: the template mistakes the seed describes.

Warnings only: the run goes on either way (a declared input that is never used costs nothing; an undeclared
``{{variable}}`` renders empty, which the warning says).
"""

from __future__ import annotations

import logging
import re
from pathlib import Path

from evalkit.judges.prompty import load as load_prompty

log = logging.getLogger("evalkit.custom")

_LLM_HINTS = re.compile(r"load_flow|promptflow|model_config|\.prompty")


def check_template(name: str, path: Path) -> None:
    """Warn about the template mistakes the seed describes; the run goes on either way."""
    try:
        template = load_prompty(path)
    except (ValueError, OSError) as exc:
        log.warning(
            "Custom evaluator '%s': %s cannot be read (%s); the judge will fail to load.",
            name,
            path.name,
            exc,
        )
        return
    except Exception as exc:  # noqa: BLE001 - a YAML error in the front matter
        log.warning(
            "Custom evaluator '%s': the front matter of %s is not valid YAML (%s).", name, path.name, exc
        )
        return
    used, declared = template.variables(), set(template.inputs)
    if not declared:
        log.warning(
            "Custom evaluator '%s': %s has no inputs: block, so promptflow passes no variables and the template "
            "renders empty. Declare every {{variable}} under inputs: with type: string.",
            name,
            path.name,
        )
    for variable in sorted(used - declared) if declared else []:
        log.warning(
            "Custom evaluator '%s': %s uses {{%s}}, which its inputs: block does not declare; promptflow "
            "renders it empty. Add '%s: {type: string}' under inputs:.",
            name,
            path.name,
            variable,
            variable,
        )
    if "prompt" in used or "prompt" in declared:
        log.warning(
            "Custom evaluator '%s': %s uses 'prompt', which promptflow reserves; name it user_prompt in the "
            "template and pass prompt=... on as user_prompt=... in %s.py.",
            name,
            path.name,
            name,
        )


def warn_missing_prompty(name: str, path: Path) -> None:
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return
    hit = _LLM_HINTS.search(text)
    if hit:
        log.warning(
            "Custom evaluator '%s' has no %s.prompty, but %s mentions %r: if it is an LLM judge, the "
            ".prompty may be missing. Running it as a code-only evaluator.",
            name,
            name,
            path.name,
            hit.group(0),
        )
