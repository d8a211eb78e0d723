"""RetrievalQuery and RetrievalResult: deterministic checks of what the agent's retrieval actually did.

Both evaluators read the ``retrieval_executions`` column of the case table: per row a list of execution
dicts in the upstream ``Diagnostics.retrieval_executions`` shape (``capability``, ``status``,
``totalResultCount``, ``queries: [{queryString, filterExpression}]``,
``retrievalHits: [{rank, webUrl, extracts: [{text}]}]``). A missing column, ``None``/NaN or an empty list
all mean "no executions". Malformed parts (an execution that is not a dict, a ``queryString`` that is not a
string, ...) are skipped rather than raised on: diagnostics come from a live system, and one odd record
should not cost the whole row its score. The data is nested lists, so the work is a tight per-row loop
rather than column arithmetic; configured terms are case-folded once per row.

All text comparisons are case-insensitive substring tests (``str.casefold``). An execution *failed* when
its ``status`` is not null and not ``"success"`` (case-insensitive); a null status is "unknown", not a
failure.

RetrievalQuery (pass/fail, score 1.0 or 0.0, threshold 1.0)
    Options: ``capability`` (required, exact string match against the execution's ``capability``),
    ``selector`` (required), ``includes`` (list, default []), ``excludes`` (list, default []). A bare
    string for ``includes``/``excludes`` is read as a one-term list (the seed documents them as ``string``).

    * The *matched queries* are the ``queryString`` values of the scoped executions that contain
      ``selector``; ``filterExpression`` is not consulted (upstream V1). ``matched_queries`` lists them
      once each, in order.
    * No matched query: ``retrieval_failure`` when the capability has executions and every one of them
      failed; otherwise ``no_matching_query`` (no execution of the capability, or none of its queries
      contains the selector). A matched query wins over a failure status: it was issued, so it is judged.
    * Otherwise each matched query is judged on its own: missing = the ``includes`` terms it lacks,
      found = the ``excludes`` terms it contains. The row passes when at least one matched query has
      neither. The details describe the *best* matched query, the one with the fewest problems
      (len(missing) + len(found)), earliest on ties: ``includes_missing`` and ``excludes_found`` are its
      lists. This keeps code and lists consistent with the pass rule -- pass exactly when both lists are
      empty -- which a per-term union or intersection over all matched queries would not (q1 = "a",
      q2 = "b" with includes [a, b]: no term is missing from every query, yet the row fails).
    * diagnostic_code then is ``pass``, ``required_terms_missing`` (only includes),
      ``excluded_terms_found`` (only excludes) or ``mixed_term_failure`` (both).

RetrievalResult (proportional score, threshold 1.0, pass only when every configured check passes)
    Options: ``capability`` (optional in evalkit; absent means the hits of all executions),
    ``expected_items`` (``[{"retrievalExtract_contains": text}]``), ``min_expected_count`` (int >= 1),
    ``max_rank`` (int >= 1, default 10). At least one of ``expected_items`` / ``min_expected_count`` must
    be set; an empty ``expected_items`` list counts as not set.

    * Candidate hits: the hits of the scoped executions whose rank is ``<= max_rank``; a hit without an
      integer rank (null, missing, a string, a bool; 3.0 counts as 3) takes its 1-based position in its
      execution's hit list. ``results_evaluated`` is their number. Execution status does not filter hits.
    * An expected item is found when its text is contained in one extract text of a candidate hit (a text
      split across two extracts does not count). The matched item records ``extractMatch`` (the configured
      text), ``matchedHitRank`` (best rank among the matching hits, earliest on ties) and ``matchedHitUrl``
      (that hit's ``webUrl``, omitted when not a string). Missing items are ``{"extractMatch": text}``;
      ``extract_failures`` is the whole ``missing_items`` list when there were candidate hits (hits existed
      but none contained the text) and empty otherwise.
    * Count check: ``results_evaluated >= min_expected_count``.
    * score = ``round(found / expected, 2)`` when ``expected_items`` is set (2 of 3 -> 0.67), else 1.0 / 0.0
      from the count check. The result is "pass" only when every check passes, so a row whose items are
      all found but whose count check fails has score 1.0 and result "fail".
    * diagnostic_code precedence: ``pass`` (all checks pass, whatever the statuses say), then ``error``
      (the scope has executions and all of them failed), then ``count_below_minimum``, then
      ``not_retrieved``.

Configuration mistakes (a required option missing or of the wrong type) give that row an error result with
code ``evaluatorConfigurationError`` and a message naming the option; other rows are still scored. Unknown
options are ignored. The ``details`` follow the upstream ``RetrievalQueryScoreValid`` /
``RetrievalResultScoreValid`` definitions.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from numbers import Integral
from operator import itemgetter
from typing import TYPE_CHECKING, Any

import numpy as np

from evalkit.evaluators.base import CONFIG_ERROR, OptionError, result_frame

if TYPE_CHECKING:
    import pandas as pd

EXECUTIONS_COLUMN = "retrieval_executions"
THRESHOLD = 1.0
DEFAULT_MAX_RANK = 10
_SEQUENCES = (list, tuple, np.ndarray)


def _executions(rows: pd.DataFrame) -> list:
    """The per-row execution lists; a missing column reads as no executions for every row."""
    if EXECUTIONS_COLUMN not in rows.columns:
        return [None] * len(rows)
    return rows[EXECUTIONS_COLUMN].tolist()


def _as_list(value: Any) -> Sequence:
    """``value`` when it is a sequence, else empty: tolerates None/NaN and malformed records.

    numpy arrays count as sequences because nested lists read back from Parquet arrive as object arrays.
    """
    return value if isinstance(value, _SEQUENCES) else ()


def _failed(execution: dict) -> bool:
    """Whether an execution reports a non-success status (a null status is unknown, not a failure)."""
    status = execution.get("status")
    return status is not None and str(status).casefold() != "success"


def _required_text(options: dict, name: str) -> str:
    value = options.get(name)
    if value is None:
        raise OptionError(f"RetrievalQuery requires the option '{name}'")
    if not isinstance(value, str) or not value:
        raise OptionError(f"option '{name}' must be a non-empty string, got {value!r}")
    return value


def _terms(options: dict, name: str) -> list[str]:
    value = options.get(name)
    if value is None:
        return []
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, _SEQUENCES) or not all(isinstance(t, str) and t for t in value):
        raise OptionError(f"option '{name}' must be a list of non-empty strings, got {value!r}")
    return list(value)


def _quoted(terms: list[str]) -> str:
    return ", ".join(repr(t) for t in terms)


def _assemble(index, outcomes: list[tuple]) -> pd.DataFrame:
    """Turn per-row ``(score, result, reason, error, code, details)`` tuples into a result frame."""
    if not outcomes:
        return result_frame(index)
    score, result, reason, error, code, details = (list(col) for col in zip(*outcomes, strict=True))
    threshold = [math.nan if r == "error" else THRESHOLD for r in result]
    return result_frame(
        index,
        score=score,
        result=result,
        threshold=threshold,
        reason=reason,
        error=error,
        code=code,
        details=details,
    )


def _config_error(message: str) -> tuple:
    return (math.nan, "error", None, message, CONFIG_ERROR, None)


class _PerRowEvaluator:
    """Shared ``score``: ``_score_row`` per row; a ``OptionError`` becomes that row's error result."""

    score_field = "score"
    has_threshold = True
    requires: tuple[str, ...] = ()
    is_llm = False

    def score(self, rows: pd.DataFrame, configs: list[dict[str, Any]]) -> pd.DataFrame:
        """Score every row; a row with unusable options gets an ``evaluatorConfigurationError`` result."""
        outcomes = []
        for executions, options in zip(_executions(rows), configs, strict=True):
            try:
                if options is None:
                    options = {}
                elif not isinstance(options, dict):
                    raise OptionError(f"{self.name} options must be an object, got {options!r}")
                outcomes.append(self._score_row(executions, options))
            except OptionError as exc:
                outcomes.append(_config_error(str(exc)))
        return _assemble(rows.index, outcomes)

    def _score_row(self, executions: Any, options: dict) -> tuple:
        raise NotImplementedError


class RetrievalQuery(_PerRowEvaluator):
    """Did the agent turn the user's intent into the right retrieval query? (see the module docstring)."""

    name = "RetrievalQuery"
    key = "retrievalQuery"

    def _score_row(self, executions: Any, options: dict) -> tuple:
        capability = _required_text(options, "capability")
        selector = _required_text(options, "selector")
        includes = _terms(options, "includes")
        excludes = _terms(options, "excludes")
        sel = selector.casefold()

        scoped = [
            e for e in _as_list(executions) if isinstance(e, dict) and e.get("capability") == capability
        ]
        matched: list[str] = []
        n_queries = 0
        for execution in scoped:
            for query in _as_list(execution.get("queries")):
                text = query.get("queryString") if isinstance(query, dict) else None
                if isinstance(text, str):
                    n_queries += 1
                    if sel in text.casefold() and text not in matched:
                        matched.append(text)

        if not matched:
            if scoped and all(_failed(e) for e in scoped):
                statuses = sorted({str(e.get("status")) for e in scoped})
                code = "retrieval_failure"
                reason = (
                    f"All {len(scoped)} {capability} retrieval execution(s) failed "
                    f"(status {_quoted(statuses)}) and no query contains the selector {selector!r}."
                )
            elif not scoped:
                code = "no_matching_query"
                reason = f"No retrieval execution of capability {capability!r} was found."
            else:
                code = "no_matching_query"
                reason = (
                    f"None of the {n_queries} {capability} quer{'y' if n_queries == 1 else 'ies'} "
                    f"contains the selector {selector!r}."
                )
            details = {
                "diagnostic_code": code,
                "matched_queries": [],
                "includes_missing": [],
                "excludes_found": [],
            }
            return (0.0, "fail", reason, None, None, details)

        inc = [(t, t.casefold()) for t in includes]
        exc = [(t, t.casefold()) for t in excludes]
        best = None
        for text in matched:
            folded = text.casefold()
            missing = [t for t, f in inc if f not in folded]
            found = [t for t, f in exc if f in folded]
            if best is None or len(missing) + len(found) < len(best[1]) + len(best[2]):
                best = (text, missing, found)
                if not missing and not found:
                    break
        text, missing, found = best

        if not missing and not found:
            code, score, result = "pass", 1.0, "pass"
            clauses = [f"matches the selector {selector!r}"]
            if includes:
                clauses.append(f"contains every required term ({_quoted(includes)})")
            if excludes:
                clauses.append(f"contains none of the excluded terms ({_quoted(excludes)})")
            reason = f"Query {text!r} " + ", ".join(clauses[:-1]) + (" and " if len(clauses) > 1 else "")
            reason += clauses[-1] + "."
        else:
            score, result = 0.0, "fail"
            if missing and found:
                code = "mixed_term_failure"
            elif missing:
                code = "required_terms_missing"
            else:
                code = "excluded_terms_found"
            problems = []
            if missing:
                problems.append(f"is missing the required term(s) {_quoted(missing)}")
            if found:
                problems.append(f"contains the excluded term(s) {_quoted(found)}")
            scope = "The only" if len(matched) == 1 else f"The best of {len(matched)}"
            reason = f"{scope} quer{'y' if len(matched) == 1 else 'ies'} matching {selector!r}, {text!r}, "
            reason += " and ".join(problems) + "."
        details = {
            "diagnostic_code": code,
            "matched_queries": matched,
            "includes_missing": missing,
            "excludes_found": found,
        }
        return (score, result, reason, None, None, details)


def _positive_int(options: dict, name: str, default: int | None) -> int | None:
    value = options.get(name)
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, Integral) or value < 1:
        raise OptionError(f"option '{name}' must be an integer >= 1, got {value!r}")
    return int(value)


def _hit_rank(hit: dict, position: int) -> int:
    """The hit's integer rank, or its 1-based position in the execution's hit list when it has none."""
    rank = hit.get("rank")
    if type(rank) is int:  # the common case, without the slow ABC check below
        return rank
    if (isinstance(rank, Integral) and not isinstance(rank, bool)) or (
        isinstance(rank, float) and rank.is_integer()
    ):
        return int(rank)
    return position


def _extract_blob(hit: dict) -> str:
    """The hit's extract texts, case-folded and joined by NUL so that no match spans two extracts."""
    extracts = hit.get("extracts")
    try:  # fast path for well-formed extracts
        return "\0".join([x["text"] for x in extracts]).casefold()
    except (TypeError, KeyError, IndexError):
        texts = (x.get("text") if isinstance(x, dict) else None for x in _as_list(extracts))
        return "\0".join(t for t in texts if isinstance(t, str)).casefold()


class RetrievalResult(_PerRowEvaluator):
    """Did retrieval return the expected content within the top ranks? (see the module docstring)."""

    name = "RetrievalResult"
    key = "retrievalResult"

    @staticmethod
    def _options(options: dict) -> tuple[str | None, list[str], int | None, int]:
        capability = options.get("capability")
        if capability is not None and (not isinstance(capability, str) or not capability):
            raise OptionError(f"option 'capability' must be a non-empty string, got {capability!r}")
        raw_items = options.get("expected_items")
        if raw_items is None:
            raw_items = []
        if not isinstance(raw_items, _SEQUENCES):
            raise OptionError(f"option 'expected_items' must be a list, got {raw_items!r}")
        expected = []
        for i, item in enumerate(raw_items):
            text = item.get("retrievalExtract_contains") if isinstance(item, dict) else None
            if not isinstance(text, str) or not text:
                raise OptionError(
                    f"option 'expected_items[{i}]' must be an object with a non-empty string "
                    f"'retrievalExtract_contains', got {item!r}"
                )
            expected.append(text)
        min_count = _positive_int(options, "min_expected_count", None)
        max_rank = _positive_int(options, "max_rank", DEFAULT_MAX_RANK)
        if not expected and min_count is None:
            raise OptionError("RetrievalResult requires the option 'expected_items' or 'min_expected_count'")
        return capability, expected, min_count, max_rank

    def _score_row(self, executions: Any, options: dict) -> tuple:
        capability, expected, min_count, max_rank = self._options(options)

        scoped = [
            e
            for e in _as_list(executions)
            if isinstance(e, dict) and (capability is None or e.get("capability") == capability)
        ]
        # Candidate hits as (rank, webUrl, extract blob), sorted by rank; the sort is stable, so the first
        # matching candidate is the best-ranked one, the earliest on ties.
        candidates = []
        for execution in scoped:
            for position, hit in enumerate(_as_list(execution.get("retrievalHits")), start=1):
                if not isinstance(hit, dict):
                    continue
                rank = _hit_rank(hit, position)
                if rank <= max_rank:
                    candidates.append((rank, hit.get("webUrl"), _extract_blob(hit) if expected else ""))
        candidates.sort(key=itemgetter(0))
        n_candidates = len(candidates)

        matched_items, missing_items = [], []
        for text in expected:
            folded = text.casefold()
            best = next((c for c in candidates if folded in c[2]), None)
            if best is None:
                missing_items.append({"extractMatch": text})
            else:
                item = {"extractMatch": text}
                if isinstance(best[1], str):
                    item["matchedHitUrl"] = best[1]
                item["matchedHitRank"] = best[0]
                matched_items.append(item)
        extract_failures = list(missing_items) if n_candidates else []

        count_ok = min_count is None or n_candidates >= min_count
        if expected:
            score = round(len(matched_items) / len(expected), 2)
        else:
            score = 1.0 if count_ok else 0.0
        passed = count_ok and not missing_items

        scope = f"{capability} hit(s)" if capability else "hit(s)"
        parts = [f"{n_candidates} {scope} within rank {max_rank}"]
        if min_count is not None:
            parts[0] += f" (minimum {min_count})"
        if expected:
            found_part = f"found {len(matched_items)} of {len(expected)} expected item(s)"
            if missing_items:
                found_part += "; missing " + _quoted([m["extractMatch"] for m in missing_items])
            parts.append(found_part)
        if passed:
            code = "pass"
        elif scoped and all(_failed(e) for e in scoped):
            code = "error"
            statuses = sorted({str(e.get("status")) for e in scoped})
            parts.insert(0, f"all {len(scoped)} retrieval execution(s) failed (status {_quoted(statuses)})")
        elif not count_ok:
            code = "count_below_minimum"
        else:
            code = "not_retrieved"
        if not scoped:
            parts.insert(
                0,
                f"no retrieval execution of capability {capability!r}"
                if capability
                else "no retrieval execution",
            )
        reason = "; ".join(parts)
        reason = reason[0].upper() + reason[1:] + "."

        details = {
            "diagnostic_code": code,
            "results_evaluated": n_candidates,
            "matched_items": matched_items,
            "missing_items": missing_items,
            "extract_failures": extract_failures,
        }
        return (score, "pass" if passed else "fail", reason, None, None, details)


RETRIEVAL_EVALUATORS = {"RetrievalQuery": RetrievalQuery, "RetrievalResult": RetrievalResult}
