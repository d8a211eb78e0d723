"""Which run a scored case table is: document, its sha256, evalkit version, time, judge model, size.

Read by name from what a run records (``metadata.extensions["dev.evalkit.run"]`` and the judge summary), never by
dumping a mapping. Used to warn when two compared runs come from different documents, and to list runs
(:func:`evalkit.runs`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd

__all__ = ["run_identity"]


def _metadata(df: pd.DataFrame) -> dict:
    meta = df.attrs.get("evalkit") or {}
    document = meta.get("document") if isinstance(meta, dict) else None
    metadata = document.get("metadata") if isinstance(document, dict) else None
    return metadata if isinstance(metadata, dict) else {}


def _text(value: Any, limit: int = 200) -> str | None:
    if isinstance(value, (str, int, float)) and not isinstance(value, bool) and str(value):
        return str(value)[:limit]
    return None


def _without_secrets(model: str | None) -> str | None:
    """A model given as a URL loses its user info and query (where keys hide); a plain name stays."""
    if not model or "://" not in model:
        return model
    from urllib.parse import urlsplit

    parts = urlsplit(model)
    return f"{parts.scheme}://{parts.hostname or ''}{parts.path}"


def run_identity(df: pd.DataFrame) -> dict[str, Any]:
    """``document`` (metadata name), ``document_sha256``, ``evalkit_version``, ``evaluated_at``,
    ``judge_model``, ``source`` (file name), ``rows`` and, for a run with ``--samples K``, ``samples``
    (``{"k", "pass_rule", "flaky_rows"}``) of a run; a field the run did not record is None."""
    metadata = _metadata(df)
    extensions = metadata.get("extensions") if isinstance(metadata.get("extensions"), dict) else {}
    run = extensions.get("dev.evalkit.run") if isinstance(extensions.get("dev.evalkit.run"), dict) else {}
    meta = df.attrs.get("evalkit") or {}
    judge = meta.get("judge") if isinstance(meta, dict) and isinstance(meta.get("judge"), dict) else None
    if judge is None:
        judge = (
            extensions.get("dev.evalkit.judge")
            if isinstance(extensions.get("dev.evalkit.judge"), dict)
            else {}
        )
    sha = _text(run.get("document_sha256"), 64) or _text(judge.get("document_sha256"), 64)
    source = meta.get("source") if isinstance(meta, dict) else None
    return {
        "document": _text(metadata.get("name")),
        "document_sha256": sha.lower() if sha else None,
        "evalkit_version": _text(run.get("evalkit_version"), 40) or _text(judge.get("evalkit_version"), 40),
        "evaluated_at": _text(metadata.get("evaluatedAt"), 40),
        "judge_model": _text(judge.get("model_name")) or _without_secrets(_text(judge.get("model"), 300)),
        "source": Path(str(source)).name if source and not str(source).startswith("<") else None,
        "rows": len(df),
        "samples": _samples(meta.get("samples") if isinstance(meta, dict) else None),
    }


def _samples(samples: Any) -> dict[str, Any] | None:
    """A ``--samples K`` run's ``{"k", "pass_rule", "flaky_rows"}`` (checked, bounded), else None."""
    if not isinstance(samples, dict):
        return None
    k, rule, flaky = samples.get("k"), samples.get("pass_rule"), samples.get("flaky_rows")
    if isinstance(k, bool) or not isinstance(k, int) or k < 2:
        return None
    return {
        "k": k,
        "pass_rule": _text(rule, 20),
        "flaky_rows": flaky if isinstance(flaky, int) and not isinstance(flaky, bool) else None,
    }
