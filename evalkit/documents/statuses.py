"""Item, turn and thread statuses, following the upstream rules.

- ``error``: no response was obtained (no evaluator is attempted);
- ``partial``: a response was obtained but at least one evaluator errored
  (``error = {"code": "evaluatorsFailed", "message": "Agent response obtained. K of N evaluators failed to run."}``);
- ``fail``: every evaluator ran and at least one failed;
- ``pass``: every evaluator ran and passed (also when the row asked for none).

A thread is ``error`` when any turn errored, else ``partial`` when any turn is partial, else ``fail`` when
any turn failed, else ``pass``.
"""

from __future__ import annotations

from itertools import repeat

import numpy as np
import pandas as pd

#: The code of a row with no response when no agent was run: nothing was asked, so none of the upstream agent
#: codes (``agentRequestFailed``: "an agent request failed") is true of it. The upstream closed list's code for
#: an item that could not be scored without an agent is ``evaluationCrashed`` ("evaluation of this item crashed
#: before any result could be produced; emitted by the --evaluate-only pipeline"); the message says why.
NO_RESPONSE_CODE = "evaluationCrashed"
NO_RESPONSE_MESSAGE = (
    "No response: the document records no 'response' for this item and no agent was run. "
    "Record the agent's answer in the item's 'response' field."
)


#: "pass", "fail", "partial" as shared str objects: one per status, not one per row (a numpy str array cast
#: to object made 100,000 distinct strings, 5 MB at 100,000 rows).
_STATUSES = np.array(["pass", "fail", "partial"], dtype=object)


_NOT_ASKED, _PASS, _FAIL, _ERROR, _OTHER = range(5)
_RESULT_CODES = {None: _NOT_ASKED, "pass": _PASS, "fail": _FAIL, "error": _ERROR}


def _result_codes(results: np.ndarray) -> np.ndarray:
    """One small code per row for a ``<key>_result`` column, read by a dict lookup mapped in C (three pandas
    comparisons per evaluator took 0.03 s at 100,000 rows); a missing value other than None (NaN) is not
    asked, any other value is asked with no verdict."""
    values = results.tolist()
    try:
        codes = np.fromiter(map(_RESULT_CODES.get, values, repeat(_OTHER)), dtype=np.int8, count=len(values))
    except TypeError:  # an unhashable result (a custom evaluator's list, say): asked, with no verdict
        codes = np.array(
            [_RESULT_CODES.get(v, _OTHER) if v is None or type(v) is str else _OTHER for v in values], np.int8
        )
    other = np.flatnonzero(codes == _OTHER)
    if other.size:
        codes[other] = np.where(pd.notna(results[other]), _OTHER, _NOT_ASKED)
    return codes


def apply_statuses(df: pd.DataFrame, keys: list[str]) -> None:
    """Set ``status``, ``error_code`` and ``error_message`` on ``df`` in place from its result columns."""
    n = len(df)
    asked = np.zeros(n, dtype=int)
    errored = np.zeros(n, dtype=int)
    failed = np.zeros(n, dtype=bool)
    for key in keys:
        codes = _result_codes(df[f"{key}_result"].to_numpy(dtype=object))
        asked += codes != _NOT_ASKED
        errored += codes == _ERROR
        failed |= codes == _FAIL
    has_response = np.fromiter(map(isinstance, df["response"].tolist(), repeat(str)), dtype=bool, count=n)

    status = _STATUSES[np.where(errored > 0, 2, failed.view(np.uint8))]
    status[~has_response] = "error"
    codes = np.full(n, None, dtype=object)
    messages = np.full(n, None, dtype=object)
    partial = status == "partial"
    codes[partial] = "evaluatorsFailed"
    messages[partial] = [
        f"Agent response obtained. {k} of {a} evaluators failed to run."
        for k, a in zip(errored[partial], asked[partial])
    ]
    # Rows without a response keep an agent error recorded before scoring (agent runs), else say why.
    prior_codes = (
        df["error_code"].to_numpy(dtype=object)
        if "error_code" in df.columns
        else np.full(n, None, dtype=object)
    )
    prior_messages = (
        df["error_message"].to_numpy(dtype=object)
        if "error_message" in df.columns
        else np.full(n, None, dtype=object)
    )
    refused = np.array([c == "toolCallNotAllowed" for c in prior_codes], dtype=bool)
    for i in np.flatnonzero(refused):
        status[i], codes[i], messages[i] = "error", prior_codes[i], prior_messages[i]
    for i in np.flatnonzero(~has_response):
        code = prior_codes[i]
        if isinstance(code, str) and code:
            codes[i], messages[i] = code, prior_messages[i]
        else:
            codes[i], messages[i] = NO_RESPONSE_CODE, NO_RESPONSE_MESSAGE
    df["status"] = status
    df["error_code"] = codes
    df["error_message"] = messages


def thread_summary(statuses: list[str]) -> dict:
    """The upstream ``ThreadSummary`` of a thread's turn statuses."""
    counts = {s: statuses.count(s) for s in ("pass", "fail", "partial", "error")}
    if counts["error"]:
        overall = "error"
    elif counts["partial"]:
        overall = "partial"
    elif counts["fail"]:
        overall = "fail"
    else:
        overall = "pass"
    return {
        "turns_total": len(statuses),
        "turns_passed": counts["pass"],
        "turns_failed": counts["fail"],
        "turns_partial": counts["partial"],
        "turns_errored": counts["error"],
        "overall_status": overall,
    }
