"""Reading eval documents from disk and checking them against evalkit's schema (v1).

Problems are reported all at once, in document order, each as ``"<json path>: <message>"`` with a path such
as ``items[1].turns[0]``: the user fixes a file in one pass instead of one error per run. Where the schema
offers alternatives (``oneOf``: a single-turn item or a thread, a score or an errored record), the branch the
user evidently meant is picked from the data itself, so messages never come from the wrong alternative.

Large documents stay fast: plain items (only string ``prompt`` / ``expected_response`` / ``response`` /
``context`` with a non-empty prompt) are provably valid and skip ``jsonschema``.
"""

from __future__ import annotations

import difflib
import functools
import json
import re
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any, NamedTuple

from jsonschema import Draft202012Validator
from jsonschema.exceptions import ValidationError

from evalkit.documents.json_input import format_path as _format_path
from evalkit.documents.json_input import quote as _quote
from evalkit.documents.json_input import read_json  # noqa: F401 - documents are read from here too
from evalkit.documents.versions import LATEST_VERSION
from evalkit.errors import DocumentError, shown

SCHEMA_PATH = Path(__file__).resolve().parent / "schema" / "eval-document.schema.json"

#: Keys of an item the fast path accepts without jsonschema (all must hold strings).
_PLAIN_ITEM_KEYS = frozenset({"prompt", "expected_response", "response", "context"})


#: Plain-language explanations of the schema's patterns, keyed by the pattern itself.
_PATTERN_HINTS = {
    r"^1\.\d+\.\d+$": "{value} is not a valid version; expected 1.<minor>.<patch>",
    r"\S": "must contain a non-whitespace character (got {value})",
    r"^([a-zA-Z][a-zA-Z0-9_]*|Builtin\.[A-Za-z]+)$": "{value} is not a valid evaluator name; use letters, "
    "digits and '_', starting with a letter (or Builtin.<Name> for an AgentCore built-in span judge)",
}

_JSON_TYPES = (
    (bool, "boolean"),
    (int, "integer"),
    (float, "number"),
    (str, "string"),
    (list, "array"),
    (dict, "object"),
    (type(None), "null"),
)

_ROOT_REQUIRED_HINTS = {
    "schemaVersion": f'is required (add "schemaVersion": "{LATEST_VERSION}")',
    "items": 'is required (add "items": an array of prompts or threads)',
}


class _Problem(NamedTuple):
    """One problem: where it is shown (``path``), where it sorts (``anchor``), what it says, and the
    schema keyword that failed (``kind``, used to drop noise such as an enum complaint about a wrong type)."""

    path: tuple
    anchor: tuple
    message: str
    kind: str = ""


# ------------------------------------------------------------------------------------------------ validation


@functools.lru_cache(maxsize=1)
def _validator() -> Draft202012Validator:
    """The schema validator, built once per process (loading and compiling the schema is not free)."""
    schema = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
    return Draft202012Validator(schema)


def validate_document(doc: Any, source: str) -> None:
    """Raise ``DocumentError`` listing every schema problem of ``doc`` (read from ``source``), if any."""
    problems = schema_problems(doc)
    if problems:
        count = len(problems)
        noun = "problem" if count == 1 else "problems"
        raise DocumentError(f"{shown(source)} is not a valid eval document ({count} {noun}):", problems)


def schema_problems(doc: Any, *, fast_path: bool = True) -> list[str]:
    """Every way ``doc`` breaks the schema, in document order, as ``"<json path>: <message>"`` lines.

    ``fast_path=False`` sends every item through jsonschema; it exists so tests can prove the fast path
    changes nothing but the time taken.
    """
    checked, kept = _split_plain_items(doc) if fast_path else (doc, None)
    problems = []
    for error in _validator().iter_errors(checked):
        for problem in _explain(error):
            problems.append(_restore_indices(problem, kept))
    mistyped = {p.path for p in problems if p.kind == "type"}
    problems = [p for p in problems if p.kind not in ("enum", "const") or p.path not in mistyped]
    problems.sort(key=lambda p: _document_order(doc, p.anchor))
    lines = (f"{_format_path(p.path)}: {p.message}" for p in problems)
    return list(dict.fromkeys(lines))


def _is_plain_item(item: Any) -> bool:
    """True for an item the schema certainly accepts: a SingleTurnEvaluation with only string fields.

    Sound because such an item has the one required key (``prompt``, a non-empty string, so ``minLength``
    holds), only keys SingleTurnEvaluation declares (so ``additionalProperties: false`` holds), each of the
    declared type ``string``, and no ``turns`` (so it cannot also match MultiTurnThread: exactly one branch
    of the ``oneOf`` matches).
    """
    if type(item) is not dict:
        return False
    prompt = item.get("prompt")
    if type(prompt) is not str or not prompt or not item.keys() <= _PLAIN_ITEM_KEYS:
        return False
    return all(type(value) is str for value in item.values())


def _split_plain_items(doc: Any) -> tuple[Any, list[int] | None]:
    """Return the document jsonschema still has to see, and the original index of each item left in it.

    One plain item is kept when all are plain, so the array is still non-empty for ``minItems``; it is
    valid, so it adds no problem.
    """
    items = doc.get("items") if isinstance(doc, dict) else None
    if not isinstance(items, list):
        return doc, None
    kept = [index for index, item in enumerate(items) if not _is_plain_item(item)]
    if len(kept) == len(items):
        return doc, None
    kept = kept or [0]
    return {**doc, "items": [items[index] for index in kept]}, kept


def _restore_indices(problem: _Problem, kept: list[int] | None) -> _Problem:
    """Map ``items[k]`` of the reduced document back to the item's index in the original one."""
    if kept is None:
        return problem

    def restore(path: tuple) -> tuple:
        if len(path) > 1 and path[0] == "items" and isinstance(path[1], int):
            return ("items", kept[path[1]], *path[2:])
        return path

    return problem._replace(path=restore(problem.path), anchor=restore(problem.anchor))


def _document_order(doc: Any, anchor: tuple) -> tuple[int, ...]:
    """Sort key placing a problem where its anchor sits in the file (keys in written order)."""
    key = []
    node = doc
    for step in anchor:
        if isinstance(node, dict):
            keys = list(node)
            key.append(keys.index(step) if step in node else len(keys))
            node = node.get(step)
        elif isinstance(node, list) and isinstance(step, int):
            key.append(step)
            node = node[step] if 0 <= step < len(node) else None
        else:
            key.append(0)
            node = None
    return tuple(key)


# ------------------------------------------------------------------------------------------ error messages


def _explain(error: ValidationError, note: str = "") -> Iterator[_Problem]:
    """Turn one jsonschema error (and, for alternatives, the right part of its subtree) into problems."""
    path = tuple(error.absolute_path)
    if error.validator in ("oneOf", "anyOf"):
        yield from _explain_alternatives(error, path)
        return
    if error.validator == "required":
        yield from _explain_required(error, path)
        return
    if error.validator == "additionalProperties":
        yield from _explain_unknown_keys(error, path)
        return
    if error.validator == "pattern" and list(error.relative_schema_path)[-2:-1] == ["propertyNames"]:
        yield _Problem(path, (*path, error.instance), _pattern_message(error.validator_value, error.instance))
        return
    yield _Problem(path, path, _message(error, path, note), error.validator)


def _message(error: ValidationError, path: tuple, note: str = "") -> str:
    """The one-line message for a single (non-alternative) keyword failure.

    ``note`` (e.g. ``when result is 'pass'``) says which alternative the rule comes from.
    """
    kind, expected, value = error.validator, error.validator_value, error.instance
    if kind == "type":
        if not path and isinstance(value, list):
            return "expected an object with 'schemaVersion' and 'items', got array"
        return f"expected {_describe_types(expected)}, got {_json_type(value)}"
    if kind == "minItems":
        return (
            "must contain at least one item" if expected == 1 else f"must contain at least {expected} items"
        )
    if kind == "maxItems":
        return f"must contain at most {expected} items (has {len(value)})"
    if kind == "minLength":
        return "must not be empty" if expected == 1 else f"must be at least {expected} characters long"
    if kind == "pattern":
        return _pattern_message(expected, value)
    when = f" {note}" if note else ""
    if kind == "enum":
        return (
            f"must be one of {_choices(expected)}{when} (got {_quote(value)}){_did_you_mean(value, expected)}"
        )
    if kind == "const":
        return f"must be {_quote(expected)}{when} (got {_quote(value)})"
    if kind in _BOUNDS:
        return f"must be {_BOUNDS[kind]} {expected}{when} (got {_quote(value)})"
    if kind == "not" and isinstance(expected, dict) and list(expected) == ["required"]:
        return f"{_choices(expected['required'])} is not allowed here"
    return f"{error.message}{when}"


def _pattern_message(pattern: str, value: Any) -> str:
    """Explain a failed ``pattern`` in words when the pattern is one of the schema's known ones."""
    template = _PATTERN_HINTS.get(pattern)
    if template is None:
        return f"{_quote(value)} does not match the pattern {pattern}"
    return template.replace("{value}", _quote(value))


_BOUNDS = {"minimum": ">=", "maximum": "<=", "exclusiveMinimum": ">", "exclusiveMaximum": "<"}


def _explain_required(error: ValidationError, path: tuple) -> Iterator[_Problem]:
    """``'prompt' is required``; at the root the field itself is the path and the fix is spelled out."""
    instance = error.instance if isinstance(error.instance, dict) else {}
    strays = (
        _undeclared_keys(error.schema, instance)
        if error.schema.get("additionalProperties") is not False
        else []
    )
    for name in error.validator_value:
        if name in instance:
            continue
        hint = _misspelling_hint(name, strays)
        if not path and name in _ROOT_REQUIRED_HINTS:
            yield _Problem((name,), path, _ROOT_REQUIRED_HINTS[name] + hint)
        else:
            yield _Problem(path, path, f"{_quote(name)} is required{hint}")


def _explain_unknown_keys(error: ValidationError, path: tuple) -> Iterator[_Problem]:
    """One ``'<key>' is not allowed`` per undeclared key, with a did-you-mean when one is close."""
    if error.validator_value is not False:
        yield _Problem(path, path, error.message)
        return
    known = list(error.schema.get("properties", {}))
    for key in _undeclared_keys(error.schema, error.instance):
        yield _Problem(path, (*path, key), f"{_quote(key)} is not allowed{_did_you_mean(key, known)}")


def _explain_alternatives(error: ValidationError, path: tuple) -> Iterator[_Problem]:
    """Report a failed ``oneOf`` / ``anyOf`` through the one branch the data shows the user meant."""
    branches = error.validator_value
    refs = [_ref_name(branch) for branch in branches]
    if not error.context:
        if not _lacks_discriminators(error):
            yield _Problem(
                path, path, "matches more than one of the allowed forms; make it match exactly one"
            )
        return
    if set(refs) == {"SingleTurnEvaluation", "MultiTurnThread"}:
        yield from _explain_item(error, path, refs)
        return
    singles = [branch.get("required") for branch in branches if list(branch) == ["required"]]
    if error.validator == "anyOf" and len(singles) == len(branches) and all(len(r) == 1 for r in singles):
        names = _choices([r[0] for r in singles], conjunction="or")
        yield _Problem(path, path, f"needs {names} (at least one)")
        return
    index, note = _pick_branch(error, refs)
    yield from _explain_branch(error, index, note)


def _explain_branch(error: ValidationError, index: int, note: str = "") -> Iterator[_Problem]:
    """Problems of one branch of an alternative, recursing into nested alternatives."""
    for sub in error.context:
        if sub.relative_schema_path[0] == index:
            yield from _explain(sub, note)


def _explain_item(error: ValidationError, path: tuple, refs: list[str | None]) -> Iterator[_Problem]:
    """An item is a single-turn evaluation when it has ``prompt``, a thread when it has ``turns``."""
    item = error.instance
    if not isinstance(item, dict):
        yield _Problem(path, path, f"expected an object, got {_json_type(item)}")
        return
    has_prompt, has_turns = "prompt" in item, "turns" in item
    if has_prompt and has_turns:
        yield _Problem(
            path,
            path,
            "has both 'prompt' and 'turns'; an item is either a single-turn evaluation (prompt) "
            "or a thread (turns), not both",
        )
        return
    if not has_prompt and not has_turns:
        yield _Problem(path, path, "needs 'prompt' (single-turn evaluation) or 'turns' (thread)")
        definitions = _validator().schema["$defs"]
        known = [key for name in refs for key in definitions[name].get("properties", {})]
        for key in item:
            if key not in known:
                yield _Problem(path, (*path, key), f"{_quote(key)} is not allowed{_did_you_mean(key, known)}")
        return
    yield from _explain_branch(error, refs.index("SingleTurnEvaluation" if has_prompt else "MultiTurnThread"))


def _pick_branch(error: ValidationError, refs: list[str | None]) -> tuple[int, str]:
    """Choose the branch to report, and a note to append to its messages (may be empty).

    - score entries: the errored record when ``result`` is (or is a misspelling of) ``"error"``, else the
      valid-result branch;
    - inline branches told apart by ``const`` properties: the one whose constants the data matches best,
      earlier properties weighing more;
    - otherwise the branch with the fewest problems.
    """
    instance = error.instance
    if "ErroredScore" in refs and isinstance(instance, dict):
        errored = refs.index("ErroredScore")
        result = instance.get("result")
        if result == "error" or (
            isinstance(result, str) and _closest(result, ["pass", "fail", "error"]) == "error"
        ):
            return errored, ""
        return (1 if errored == 0 else 0), ""
    consts = [_const_properties(branch) for branch in error.validator_value]
    if isinstance(instance, dict) and all(consts):
        scores = [[instance.get(name) == value for name, value in c] for c in consts]
        index = max(range(len(scores)), key=lambda i: (scores[i], -i))
        matched = [
            f"{name} is {_quote(value)}"
            for (name, value), hit in zip(consts[index], scores[index], strict=True)
            if hit
        ]
        return index, f"when {' and '.join(matched)}" if matched else ""
    counts = [0] * len(refs)
    for sub in error.context:
        counts[sub.relative_schema_path[0]] += 1
    return min(range(len(counts)), key=lambda i: (counts[i] == 0, counts[i], i)), ""


def _lacks_discriminators(error: ValidationError) -> bool:
    """True when branches told apart by ``const`` all match only because those properties are absent.

    Absent discriminators are already reported as ``'<name>' is required`` by the enclosing schema; saying
    "matches more than one form" on top would only confuse.
    """
    consts = [_const_properties(branch) for branch in error.validator_value]
    if not isinstance(error.instance, dict) or not all(consts):
        return False
    return not any(name in error.instance for c in consts for name, _ in c)


def _const_properties(branch: Any) -> list[tuple[str, Any]]:
    """``[(property, constant), ...]`` for an inline branch that pins properties with ``const``."""
    if not isinstance(branch, dict):
        return []
    props = branch.get("properties", {})
    return [
        (name, spec["const"]) for name, spec in props.items() if isinstance(spec, dict) and "const" in spec
    ]


def _ref_name(branch: Any) -> str | None:
    """``{"$ref": "#/$defs/Turn"}`` -> ``"Turn"``."""
    ref = branch.get("$ref") if isinstance(branch, dict) else None
    return ref.rsplit("/", 1)[-1] if isinstance(ref, str) else None


def _undeclared_keys(schema: dict, instance: Any) -> list[str]:
    """Keys of ``instance`` that ``schema`` neither declares nor matches with a pattern."""
    if not isinstance(instance, dict):
        return []
    declared = schema.get("properties", {})
    patterns = [re.compile(p) for p in schema.get("patternProperties", {})]
    return [key for key in instance if key not in declared and not any(p.search(key) for p in patterns)]


# ------------------------------------------------------------------------------------------------- wording


def _closest(word: Any, candidates: Iterable[Any]) -> str | None:
    """The candidate ``word`` was most likely meant to be, if any is close enough.

    Close means a similar spelling (difflib ratio >= 0.75, strict enough that 'score' does not suggest
    'code') or a shortened name ('expected' for 'expected_response').
    """
    if not isinstance(word, str):
        return None
    names = [c for c in candidates if isinstance(c, str)]
    matches = difflib.get_close_matches(word, names, n=1, cutoff=0.75)
    if matches:
        return matches[0]
    lowered = word.lower()
    prefixed = [name for name in names if len(word) >= 4 and name.lower().startswith(lowered)]
    return prefixed[0] if len(prefixed) == 1 else None


def _did_you_mean(word: Any, candidates: Iterable[Any]) -> str:
    """`` (did you mean 'x'?)`` or nothing."""
    match = _closest(word, candidates)
    return f" (did you mean {_quote(match)}?)" if match and match != word else ""


def _misspelling_hint(name: str, strays: list[str]) -> str:
    """`` ('promt' looks like a misspelling of it)`` when an undeclared key is close to a missing one."""
    match = _closest(name, strays)
    return f" ({_quote(match)} looks like a misspelling of it)" if match else ""


def _choices(values: Sequence[Any], conjunction: str = "or") -> str:
    """``'a', 'b' or 'c'``."""
    quoted = [_quote(v) for v in values]
    return quoted[0] if len(quoted) == 1 else f"{', '.join(quoted[:-1])} {conjunction} {quoted[-1]}"


def _json_type(value: Any) -> str:
    """The JSON name of a Python value's type (``bool`` is checked before ``int``)."""
    for python_type, name in _JSON_TYPES:
        if isinstance(value, python_type):
            return name
    return type(value).__name__


def _describe_types(expected: str | list[str]) -> str:
    """``"array"`` -> ``an array``; ``["string", "null"]`` -> ``a string or null``."""
    names = [expected] if isinstance(expected, str) else list(expected)
    worded = [n if n == "null" else ("an " if n[0] in "aeiou" else "a ") + n for n in names]
    return worded[0] if len(worded) == 1 else f"{', '.join(worded[:-1])} or {worded[-1]}"
