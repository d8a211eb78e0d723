"""The run: send every row of the case table to an agent and record what it answers.

``run_agent(df, target)`` returns a copy of the case table whose ``response``, ``citations``,
``retrieval_executions``, ``tool_calls``, ``spans``, ``error_code`` and ``error_message`` come from the agent
(targets: ``evalkit.agents.targets``).

Single-turn items run concurrently; the turns of a thread run in order, each turn seeing the earlier turns
as chat messages (``history``), while threads run concurrently with each other. Each row carries its tool
allowlist (``allowed_tools``) to the agent. A row that fails gets the upstream error code
(``evalkit.agents.calls``) and the later turns of its thread ``turnSkipped``, without being sent. The spans
of each item are captured by ``evalkit.agents.span_capture``.
"""

from __future__ import annotations

import threading
import uuid
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor, as_completed
from typing import Any

import pandas as pd

from evalkit.agents.calls import AgentResult, call_agent
from evalkit.agents.span_capture import span_router
from evalkit.agents.targets import resolve_target

__all__ = ["TURN_SKIPPED_CODE", "TURN_SKIPPED_MESSAGE", "run_agent"]

TURN_SKIPPED_CODE = "turnSkipped"
TURN_SKIPPED_MESSAGE = "Turn not attempted: preceding turn failed"


def run_agent(
    df: pd.DataFrame,
    target: Callable | str,
    *,
    concurrency: int = 8,
    timeout: float = 120.0,
    attempts: int = 3,
    capture_spans: bool = True,
    backoff: float = 0.5,
    max_backoff: float = 30.0,
    on_done: Callable[[int, AgentResult], None] | None = None,
) -> pd.DataFrame:
    """Send every row of ``df`` to the agent ``target``; return a copy with the agent's answers.

    Every row is sent, including rows whose document already records a response: with an agent, the
    recorded ``response``, ``citations``, ``retrieval_executions`` and ``tool_calls`` are replaced (they
    describe an earlier answer), and a row the agent failed on has ``response`` None with ``error_code`` /
    ``error_message`` set, which ``statuses.apply_statuses`` keeps.

    ``concurrency``: items (single-turn items and whole threads) in flight at once. ``timeout``: seconds
    per call (a Python agent that overruns is abandoned in its daemon thread, not stopped). ``attempts``:
    calls per row, counting the first; 429, 5xx, timeouts, connection errors and exceptions raised by a
    Python agent are retried after ``backoff * 2**n`` seconds at most (full jitter, capped at
    ``max_backoff``, at least ``Retry-After``); 401/403, other 4xx and unparseable answers are final.
    ``capture_spans``: record the OpenTelemetry spans the agent emits in ``spans`` (see ``span_capture``).
    ``on_done(position, result)``: called as each row finishes (position in ``df``), from worker threads.
    """
    agent = resolve_target(target, timeout=timeout)
    router = span_router() if capture_spans else None
    n = len(df)
    prompts = [p if isinstance(p, str) else "" if _missing(p) else str(p) for p in _column(df, "prompt", "")]
    allowed = [_allowed_tools(value) for value in _column(df, "allowed_tools", None)]
    units = _units(df)
    run_id = uuid.uuid4().hex[:12]
    items = _column(df, "item", None)
    results: list[AgentResult | None] = [None] * n
    lock = threading.Lock()

    def finish(position: int, result: AgentResult) -> None:
        with lock:
            results[position] = result
        if on_done is not None:
            on_done(position, result)

    def run_unit(positions: list[int]) -> None:
        item = items[positions[0]]
        session = f"evalkit-{run_id}-{positions[0] if _missing(item) else item}"
        history: list[dict] = []
        for index, position in enumerate(positions):
            result = call_agent(
                agent,
                prompts[position],
                [dict(m) for m in history],
                allowed[position],
                session=session,
                router=router,
                timeout=timeout,
                attempts=attempts,
                backoff=backoff,
                max_backoff=max_backoff,
            )
            finish(position, result)
            if result.response is None:
                for later in positions[index + 1 :]:
                    finish(
                        later, AgentResult(error_code=TURN_SKIPPED_CODE, error_message=TURN_SKIPPED_MESSAGE)
                    )
                return
            history += [
                {"role": "user", "content": prompts[position]},
                {"role": "assistant", "content": result.response},
            ]

    try:
        with ThreadPoolExecutor(
            max_workers=max(1, int(concurrency)), thread_name_prefix="evalkit-agent"
        ) as pool:
            futures = [pool.submit(run_unit, unit) for unit in units]
            try:
                for future in as_completed(futures):
                    future.result()
            except BaseException:
                pool.shutdown(wait=False, cancel_futures=True)
                raise
    finally:
        close = getattr(agent, "close", None)
        if agent is not target and callable(close):  # the HTTP client made here
            close()

    done = [r if r is not None else AgentResult() for r in results]
    out = df.copy()

    def put(name: str, values: list) -> None:
        out[name] = pd.Series(values, index=out.index, dtype=object)

    put("response", [r.response for r in done])
    put("citations", [r.citations for r in done])
    put("retrieval_executions", [r.retrieval_executions for r in done])
    put("tool_calls", [r.tool_calls for r in done])
    put("spans", [r.spans for r in done])
    put("error_code", [r.error_code for r in done])
    put("error_message", [r.error_message for r in done])
    return out


def _column(df: pd.DataFrame, name: str, default: Any) -> list:
    return df[name].tolist() if name in df.columns else [default] * len(df)


def _missing(value: Any) -> bool:
    return value is None or value is pd.NA or (isinstance(value, float) and value != value)


def _units(df: pd.DataFrame) -> list[list[int]]:
    """Positions to run together, in document order: one per single-turn item, one per thread (by turn)."""
    turns = _column(df, "turn", None)
    keys = _column(df, "item", None) if "item" in df.columns else _column(df, "thread", None)
    units: list[list[int]] = []
    threads: dict[Any, list[int]] = {}
    for position, (turn, key) in enumerate(zip(turns, keys)):
        if _missing(turn):
            units.append([position])
            continue
        if key not in threads:
            threads[key] = []
            units.append(threads[key])
        threads[key].append(position)
    for positions in threads.values():
        positions.sort(key=lambda p: int(turns[p]))
    return units


def _allowed_tools(value: Any) -> list[str]:
    """The row's resolved tool allowlist: its ``allowed_tools`` value as a list of strings, else []."""
    if isinstance(value, (list, tuple)) or (hasattr(value, "tolist") and not isinstance(value, str)):
        values = value.tolist() if hasattr(value, "tolist") else value
        return [str(v) for v in values if not _missing(v)]
    return []
