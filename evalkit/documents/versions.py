"""Schema versions evalkit reads, and the in-memory upgrade of older document forms."""

from __future__ import annotations

import re
import warnings

from evalkit.documents.json_input import quote
from evalkit.errors import DocumentError, shown

#: This evalkit's version (``evalkit.__version__``), recorded in the results it writes. Kept here, at the
#: bottom layer, so that the results writers need not import the package root.
EVALKIT_VERSION = "0.1.0"

#: The newest upstream schema version evalkit knows; upgraded documents are stamped with it.
LATEST_VERSION = "1.11.0"
_VERSION = re.compile(r"^(\d+)\.(\d+)\.(\d+)$")


class EvalkitWarning(UserWarning):
    """Something evalkit did on the user's behalf that they should know about (an upgrade, a guess)."""


class SpanRunError(DocumentError):
    """A results.json of ``evalkit spans eval`` (an ``evaluationResults`` list, no ``items``) given where an
    eval document or a document run was expected. Its own class so that run discovery (``evalkit runs``,
    ``--history``) can list span runs apart instead of reporting them as unreadable."""


def upgrade(doc, source: str):
    """Return a schema-v1 document for ``doc``: legacy forms are upgraded in memory, never on disk.

    - a bare array ``[{"prompt", "expected_response"}, ...]`` becomes ``{"schemaVersion", "items"}``;
    - the parallel lists ``{"prompts": [...], "expected_responses": [...]}`` (upstream's
      ``samples/example_prompts_alt.json``, which the upstream CLI still reads) become items, the i-th
      prompt with the i-th expected response (the lists must be as long; ``expected_responses`` may be
      absent);
    - an object without ``schemaVersion`` gets one;
    - a future major version (2.x and later) is refused, naming the version.
    """
    if isinstance(doc, list):
        warnings.warn(
            f"{shown(source)}: legacy bare-array document upgraded in memory to schemaVersion {LATEST_VERSION} "
            "(the file is unchanged).",
            EvalkitWarning,
            stacklevel=3,
        )
        return {"schemaVersion": LATEST_VERSION, "items": doc}
    if not isinstance(doc, dict):
        raise DocumentError(
            f"{shown(source)}: an eval document is a JSON object with 'schemaVersion' and 'items' "
            f"(or a legacy array of items), not {type(doc).__name__}."
        )
    if "items" not in doc and isinstance(doc.get("evaluationResults"), list):
        raise SpanRunError(
            f"{shown(source)}: the results of 'evalkit spans eval' (span evaluation results), not an eval "
            "document or a run of one; give an eval document, or a folder written by 'evalkit run DOC --out DIR'."
        )
    if "items" not in doc and isinstance(doc.get("prompts"), list):
        doc = _prompt_lists(doc, source)
    version = doc.get("schemaVersion")
    if version is None:
        warnings.warn(
            f"{shown(source)}: no 'schemaVersion'; read as {LATEST_VERSION} (the file is unchanged; add "
            f'"schemaVersion": "{LATEST_VERSION}" to silence this).',
            EvalkitWarning,
            stacklevel=3,
        )
        return {"schemaVersion": LATEST_VERSION, **doc}
    match = _VERSION.match(version) if isinstance(version, str) else None
    if match and int(match.group(1)) >= 2:
        raise DocumentError(
            f"{shown(source)}: schemaVersion {quote(version)} is not supported: evalkit reads schema v1 "
            f"(1.0.0 to {LATEST_VERSION}). Upgrade evalkit, or write the document for schema v1."
        )
    if match and int(match.group(1)) == 1 and int(match.group(2)) > int(LATEST_VERSION.split(".")[1]):
        warnings.warn(
            f"{shown(source)}: schemaVersion {quote(version)} is newer than the newest evalkit knows ({LATEST_VERSION}); "
            "fields it does not know are kept but not acted on.",
            EvalkitWarning,
            stacklevel=3,
        )
    return doc


def _prompt_lists(doc: dict, source: str) -> dict:
    """The legacy ``{"prompts": [...], "expected_responses": [...]}`` document as items (see ``upgrade``);
    its other fields are kept."""
    prompts = doc["prompts"]
    expected = doc.get("expected_responses")
    if expected is not None and (not isinstance(expected, list) or len(expected) != len(prompts)):
        count = (
            f"{len(expected)} in 'expected_responses'"
            if isinstance(expected, list)
            else "'expected_responses'"
        )
        raise DocumentError(
            f"{shown(source)}: legacy 'prompts' / 'expected_responses' document: {len(prompts)} prompts but "
            f"{count}; give a list of one expected response per prompt, or leave 'expected_responses' out."
        )
    items = [{"prompt": prompt} for prompt in prompts]
    for item, response in zip(items, expected or [], strict=False):
        item["expected_response"] = response
    warnings.warn(
        f"{shown(source)}: legacy 'prompts' / 'expected_responses' document upgraded in memory to items "
        f"(schemaVersion {doc.get('schemaVersion', LATEST_VERSION)}; the file is unchanged).",
        EvalkitWarning,
        stacklevel=4,
    )
    rest = {k: v for k, v in doc.items() if k not in ("prompts", "expected_responses")}
    return {"schemaVersion": LATEST_VERSION, **rest, "items": items}
