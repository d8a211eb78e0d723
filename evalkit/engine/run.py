"""The column-wise run: resolve evaluators, score each one over the rows that ask for it, set statuses.

``evaluate`` is the public entry point (``evalkit.evaluate``); the rows it scores are ``rows.CaseRows``, and
large tables have their built-in deterministic evaluators scored on several cores by ``forked_parts``.

Never a per-row loop over evaluators: every evaluator receives its rows in one call. One evaluator that
crashes only turns its own rows into error results; the others keep theirs.
"""

from __future__ import annotations

import contextlib
import functools
import logging
import os
import time
from typing import Any

import numpy as np
import pandas as pd

from evalkit.documents.redaction import install_log_redaction, redact_many, register_secrets_of
from evalkit.documents.statuses import apply_statuses
from evalkit.engine.forked_parts import ForkedParts
from evalkit.engine.rows import CaseRows, score_one
from evalkit.errors import EnvironmentConfigError
from evalkit.evaluators.base import RESULT_COLUMNS, score_column
from evalkit.evaluators.custom.loading import CallableEvaluator, RowEvaluator
from evalkit.evaluators.custom.time_limit import DEFAULT_TIMEOUT
from evalkit.evaluators.jury.combine import spread_column
from evalkit.evaluators.jury.run import add_juries, plan_juries
from evalkit.evaluators.llm_judges.builtin import LLMJudge
from evalkit.evaluators.llm_judges.samples import (
    DEFAULT_PASS_RULE,
    check_samples,
    flaky_rows,
    judged_k_times,
    nothing_sampled,
)
from evalkit.evaluators.registry import resolve_evaluators
from evalkit.judges.batch import judge_in_batches
from evalkit.judges.offline import quiet_llm_libraries
from evalkit.judges.pool import JudgePool
from evalkit.judges.run_summary import JudgeRun

log = logging.getLogger("evalkit.engine")
#: The columns ``apply_statuses`` sets, joined with the result columns so that it inserts none.
STATUS_COLUMNS = ("status", "error_code", "error_message")

EvaluatorSpec = "Callable[..., dict] | dict | None"


def evaluate(
    df: pd.DataFrame,
    *,
    custom_dir: str | os.PathLike | None = None,
    evaluators: dict[str, Any] | list | None = None,
    model_config: dict | None = None,
    concurrency: int = 8,
    cache: Any = True,
    judge_timeout: float = 120.0,
    judge_attempts: int = 5,
    evaluator_timeout: float | None = DEFAULT_TIMEOUT,
    agent: Any = None,
    sample: int = 0,
    progress: bool | None = None,
    reuse: dict | None = None,
    price: Any = None,
    samples: int = 1,
    pass_rule: str = DEFAULT_PASS_RULE,
    batch: bool = False,
    copy: bool = True,
    processes: int = 1,
) -> pd.DataFrame:
    """Score a case table and return a new one with result columns, ``status`` and ``error``.

    Args:
        df: a case table from ``evalkit.load``.
        custom_dir: where custom evaluators live (default ``./custom-evaluators``).
        evaluators: evaluators to run on every row in addition to each row's own map: a dict of
            name -> options dict (a built-in or custom evaluator) or name -> callable (an ad-hoc
            evaluator called like a custom one, threshold 1), or a list of names / callables.
        model_config: the judge model for LLM evaluators (default: from the environment and .env files).
        concurrency: the most judge calls in flight at once, across the LLM evaluators of the run.
        cache: the judge cache: True (the user's cache, or ``$EVALKIT_CACHE_DIR``), False (none), or a
            ``JudgeCache``.
        judge_timeout: seconds one judge call may take before it counts as timed out.
        judge_attempts: tries per judge call for 429s, 5xx, timeouts and connection errors.
        evaluator_timeout: seconds a code-only custom (or ad-hoc) evaluator may take on one row; a longer call
            becomes an error result with code ``evaluatorTimeout`` for that row and the run goes on (``None``:
            no limit). See ``evaluators.time_limit`` for how far a runaway call is stopped. A custom
            evaluator's module gets as long to import; one that takes longer makes its rows load errors.
        agent: the agent under test (a callable ``fn(prompt, history)``, ``"file.py:function"``,
            ``"package.module:function"`` or an OpenAI-compatible ``http(s)://`` endpoint); every row is sent to
            it first, and its answers, citations, retrieval executions and spans replace the recorded ones.
        sample: which repeated judgment this run is (part of the judge cache key): runs with samples 0..k-1
            judge every row k times independently (see ``sample_judgments``).
        progress: show a progress bar (default: when the run takes more than a moment).
        reuse: a dict the caller keeps across calls with the same ``custom_dir`` and judge settings (evalkit.spark
            keeps one per executor process): evaluators are resolved (custom ones imported) and the judge pool
            and cache opened on first use, then reused, so judge back-off and HTTP clients outlive one call.
            Judge counters and tokens in the result's attrs are then cumulative over the calls.
        price: the judge model's price, ``(input, output)`` USD per 1M tokens (default: the ``EVALKIT_PRICES``
            file's entry for the model, else "price not set"); the cost is in the judge summary's ``cost``.
        samples: judge every row of every LLM judge this many times (each its own cache entry) and combine them
            by ``pass_rule`` (``all``: every judgment passed; ``majority``), see ``evaluators.samples``.
        batch: every judge call through the OpenAI / Azure OpenAI Batch API, at its price (``judges.batch``).
        copy: False does not copy ``df`` first: the scored table returned shares ``df``'s own columns (the
            result columns are joined to them), for a caller that drops its unscored table anyway (the CLI: the
            copy is 11 MB at 100,000 rows, at the run's peak). With an ``agent`` the answered table is a new
            one either way.
        processes: score the built-in deterministic evaluators of a large table (``forked_parts.SPLIT_ROWS``
            rows or more) over this many processes, forked from this one, each on a part of the rows; the
            results are the same (the CLI passes its usable cores). Forking is skipped where it is not safe.
    """
    check_samples(samples, pass_rule)
    quiet_llm_libraries()  # before custom evaluators or judges import promptflow / azure-ai-evaluation
    install_log_redaction()  # no key in any log line, promptflow's and openai's included
    table = _complete(df.copy() if copy else df)
    table.attrs = dict(df.attrs)
    meta = dict(table.attrs.get("evalkit") or {})
    adhoc, extra = split_extra(evaluators)
    if extra:
        merged: dict[int, dict] = {}
        table["evaluators"] = [merged.setdefault(id(m), {**m, **extra}) for m in table["evaluators"]]
    rows = CaseRows(table)
    names_where = _names_where(table, rows, adhoc)
    for name in extra:  # added to every row by the caller: say so in messages, not "items[0]"
        names_where[name] = "evaluators= / --evaluator"

    resolved = _resolve(
        {n: w for n, w in names_where.items() if n not in adhoc}, custom_dir, reuse, evaluator_timeout or None
    )
    resolved.update(adhoc)
    for evaluator in resolved.values():
        if isinstance(evaluator, RowEvaluator):
            evaluator.timeout = evaluator_timeout or None
    pool = (reuse or {}).get("pool") or JudgePool(
        concurrency, attempts=judge_attempts, timeout=judge_timeout, cache=None
    )
    if reuse is not None:
        reuse["pool"] = pool
    judge = _prepare_judges(resolved, model_config, pool, cache, sample, price)
    asked = {n: rows.asking(n, everywhere=n in adhoc) for n in resolved}  # juries: before any work
    juries = plan_juries(resolved, lambda n: rows.configs(n, asked[n]), custom_dir, judge and judge.price)

    if agent is not None:
        table = _run_agent(table, agent, concurrency)
        rows = CaseRows(table)  # the agent's answers are the inputs now
    work = {name: rows.asking(name, everywhere=name in adhoc) for name in resolved}
    repeats = {name: samples if isinstance(ev, LLMJudge) else 1 for name, ev in resolved.items()}
    total = int(sum(m.sum() * repeats[name] for name, m in work.items()))

    results: list[pd.DataFrame] = []  # every evaluator's result columns, joined to the table at the end

    def score_all(bar) -> tuple[list, dict]:
        results.clear()  # the Batch API's runs score twice: requests first, then their answers
        scored_specs = []
        timings = {}
        whole = {n: ev for n, ev in resolved.items() if n not in juries and repeats[n] == 1}
        forked = ForkedParts.start(rows, whole, work, processes)
        try:
            for name, evaluator in resolved.items():
                score_evaluator(name, evaluator, forked, scored_specs, timings, bar)
        finally:
            if forked is not None:
                forked.close()
        return scored_specs, timings

    def score_evaluator(name, evaluator, forked, scored_specs, timings, bar) -> None:
        started = time.perf_counter()
        mask = work[name]
        judged = [0]
        if evaluator.is_llm:

            def tick(judged=judged):
                judged[0] += 1
                bar.update(1)

            evaluator.on_row_done = tick
        if name in juries:
            parts = juries[name].score(rows.select(mask), rows.configs(name, mask), samples, pass_rule)
        elif forked is not None and name in forked.names:
            parts = forked.score(name, evaluator, mask)
        elif repeats[name] > 1:
            score = functools.partial(score_one, evaluator, rows, mask, adhoc=name in adhoc)
            parts = judged_k_times(evaluator, samples, pass_rule, score)
        else:
            parts = score_one(evaluator, rows, mask, adhoc=name in adhoc)
        columns = _result_columns(table.index, evaluator.key, parts)
        del parts  # its arrays are copied into the columns: not alive beside the next evaluator's
        if name in juries:  # the per-row spread as a result column of its own
            details = pd.Series(columns[f"{evaluator.key}_details"], index=table.index)
            columns[f"{evaluator.key}_jury_spread"] = spread_column(details)
        results.append(pd.DataFrame(columns, index=table.index))  # a block per dtype
        del columns
        scored_specs.append(
            {
                "name": name,
                "key": evaluator.key,
                "score_field": evaluator.score_field,
                "has_threshold": evaluator.has_threshold,
                "is_llm": evaluator.is_llm,
            }
        )
        timings[name] = time.perf_counter() - started
        log.debug("evaluator %s: %d rows in %.3f s", name, int(mask.sum()), timings[name])
        bar.update(int(mask.sum()) * repeats[name] - judged[0])

    if batch and judge is not None:  # every judge call through the Batch API (``judges.batch``)
        (scored_specs, timings), judge.batch = judge_in_batches(score_all, pool, judge.config, progress)
    else:
        with progress_bar(total=total, enabled=progress) as bar:
            scored_specs, timings = score_all(bar)

    table = _joined(table, results)
    apply_statuses(table, [s["key"] for s in scored_specs])
    if samples > 1:
        sampled = [resolved[s["name"]].key for s in scored_specs if repeats[s["name"]] > 1]
        if sampled:
            meta["samples"] = {"k": samples, "pass_rule": pass_rule, "flaky_rows": flaky_rows(table, sampled)}
        else:
            nothing_sampled(samples)
    meta["scored"] = scored_specs
    meta["timings"] = timings
    if judge is not None:
        meta["judge"] = judge.summary(resolved)
        if juries:  # agreement, spread and each juror's calls, tokens and cost (``evaluators.jury``)
            add_juries(meta["judge"], juries, judge.price)
    table.attrs["evalkit"] = meta
    return table


def _run_agent(table: pd.DataFrame, agent: Any, concurrency: int) -> pd.DataFrame:
    """Ask the agent (after configuration checks, before scoring); flag tool calls outside an allowlist."""
    from evalkit.agents.run import run_agent
    from evalkit.evaluators.deterministic.tool_allowlist import tool_call_not_allowed
    from evalkit.spans.reading.tool_calls import tool_calls_from_spans

    started = time.perf_counter()
    answered = run_agent(table, agent, concurrency=concurrency)
    answered.attrs = table.attrs
    log.debug("agent: %d rows in %.2f s", len(answered), time.perf_counter() - started)
    # diagnostics.tool_calls from the captured spans, where the agent did not report them itself.
    answered["tool_calls"] = [
        calls if calls is not None or not spans else tool_calls_from_spans(spans)
        for calls, spans in zip(answered["tool_calls"], answered["spans"])
    ]
    if "allowed_tools" in answered.columns:
        for position, (spans, allowed) in enumerate(zip(answered["spans"], answered["allowed_tools"])):
            refused = tool_call_not_allowed(spans, allowed) if spans else None
            if refused:
                answered.iloc[position, answered.columns.get_loc("error_code")] = "toolCallNotAllowed"
                answered.iloc[position, answered.columns.get_loc("error_message")] = refused
    return answered


def _complete(table: pd.DataFrame) -> pd.DataFrame:
    """Give a hand-built table (say ``pd.DataFrame({"prompt": ..., "response": ...})``) the case-table
    columns it lacks: no evaluators of its own, empty inputs, one item per row."""
    n = len(table)
    if "evaluators" not in table.columns:
        none: dict = {}
        table["evaluators"] = [none] * n
    for column in ("prompt", "expected_response", "context"):
        if column not in table.columns:
            table[column] = ""
    if "response" not in table.columns:
        table["response"] = None
    for column in ("citations", "retrieval_executions", "spans"):
        if column not in table.columns:
            table[column] = [[] for _ in range(n)]
    if "tool_calls" not in table.columns:
        table["tool_calls"] = None
    if "item" not in table.columns:
        table["item"] = np.arange(n)
    if "turn" not in table.columns:
        table["turn"] = pd.array([None] * n, dtype="Int64")
    return table


def split_extra(evaluators) -> tuple[dict[str, Any], dict[str, dict]]:
    """Separate ad-hoc callables from extra configured evaluators applied to every row."""
    if evaluators is None:
        return {}, {}
    items = evaluators.items() if isinstance(evaluators, dict) else [(_name_of(e), e) for e in evaluators]
    adhoc, extra = {}, {}
    for name, spec in items:
        if callable(spec):
            adhoc[name] = CallableEvaluator(name, spec)
        elif spec is None or isinstance(spec, dict):
            extra[name] = spec or {}
        else:
            raise TypeError(
                f"evaluators[{name!r}] must be a callable or an options dict, not {type(spec).__name__}"
            )
    return adhoc, extra


def _name_of(spec) -> str:
    if isinstance(spec, str):
        return spec
    name = getattr(spec, "__name__", None) or type(spec).__name__
    return name


def _names_where(table: pd.DataFrame, rows: CaseRows, adhoc: dict) -> dict[str, str]:
    """Every evaluator name in first-seen order, with the place it first appears (for messages)."""
    where: dict[str, str] = {}
    items, turns = table["item"].tolist(), table["turn"].tolist()
    for position, m in zip(rows.first, rows.maps, strict=True):
        item, turn = items[position], turns[position]
        place = f"items[{item}]" if turn is pd.NA or turn is None else f"items[{item}].turns[{turn}]"
        for name in m:
            where.setdefault(name, place)
    for name in adhoc:
        where.setdefault(name, "evaluators=")
    return where


def _resolve(names_where: dict[str, str], custom_dir, reuse: dict | None, import_timeout=None) -> dict:
    """The evaluator objects of ``names_where``; with ``reuse``, each name is resolved once and kept there."""
    if reuse is None:
        return resolve_evaluators(names_where, custom_dir, import_timeout=import_timeout)
    known = reuse.setdefault("evaluators", {})
    missing = {name: where for name, where in names_where.items() if name not in known}
    if missing:
        known.update(resolve_evaluators(missing, custom_dir, import_timeout=import_timeout))
    return {name: known[name] for name in names_where}


def _result_columns(index: pd.Index, key: str, parts: list[pd.DataFrame]) -> dict[str, np.ndarray]:
    """The ``<key>_*`` columns of one evaluator over the rows of ``index``; rows that did not ask keep empty
    values (None / NaN).

    Scores stay numeric unless an evaluator returns booleans (exactMatch), which are kept as such.
    """
    n = len(index)
    columns = {}
    parts = [p for p in parts if len(p)]
    places = [index.get_indexer(p.index) for p in parts]  # once per part, not once per column
    for column in RESULT_COLUMNS:
        target = score_column(key) if column == "score" else f"{key}_{column}"
        sources = [(at, p[column].to_numpy()) for at, p in zip(places, parts, strict=True)]
        numeric = column == "threshold" or (
            column == "score" and all(v.dtype.kind in "fiu" for _, v in sources)
        )
        if numeric:
            values = np.full(n, np.nan)
        else:
            values = np.full(n, np.nan if column == "score" else None, dtype=object)
        for positions, source in sources:
            values[positions] = source
        if column == "error":  # messages from servers and user code: no key leaves the process
            present = np.flatnonzero(pd.notna(values))
            values[present] = redact_many(values[present].tolist())
        columns[target] = values
    return columns


def _joined(table: pd.DataFrame, results: list[pd.DataFrame]) -> pd.DataFrame:
    """``table`` with every evaluator's result columns (``results``: a frame per evaluator) and the status
    columns ``apply_statuses`` fills: those it already has (a scored table scored again) replaced in place,
    the new ones joined at once.

    Inserted one by one, the columns of a run of many evaluators left a fragmented frame (a block per
    column), slow to use, and pandas' PerformanceWarning; each evaluator's frame holds a block per dtype.
    ``pd.concat`` joins them with copy-on-write on: the one way pandas 2 joins frames without consolidating
    the table's own blocks, which copies every input column (+70 MB of peak memory on a 100,000-row run).
    """
    frames = []
    for frame in results:
        for name in [c for c in frame.columns if c in table.columns]:
            table[name] = frame.pop(name)
        if len(frame.columns):
            frames.append(frame)
    placeholders = [c for c in STATUS_COLUMNS if c not in table.columns]
    if placeholders:
        frames.append(pd.DataFrame({c: None for c in placeholders}, index=table.index))
    if not frames:
        return table
    attrs = table.attrs
    with pd.option_context("mode.copy_on_write", True):
        joined = pd.concat([table, *frames], axis=1)
    joined.attrs = attrs
    return joined


def _prepare_judges(
    resolved: dict, model_config: dict | None, pool: JudgePool, cache, sample: int = 0, price=None
) -> JudgeRun | None:
    """Stop before any work when an LLM evaluator is asked for and no judge model is configured;
    otherwise give every LLM evaluator the model and the run's one judge pool."""
    llm = [name for name, ev in resolved.items() if getattr(ev, "is_llm", False)]
    if not llm:
        return None
    from evalkit.judges.models import MISSING_JUDGE_MESSAGE, describe, judge_config

    config = model_config or judge_config()
    if config is None:
        what = ", ".join(llm)
        raise EnvironmentConfigError(MISSING_JUDGE_MESSAGE.format(what=f"The LLM evaluator(s) {what}"))
    register_secrets_of(config)
    log.debug("judge model: %s", describe(config))
    from evalkit.judges.prices import price_for

    price = price_for(config.get("azure_deployment") or config.get("model"), price)  # a bad file: before work
    if pool.cache is None:  # a reused pool keeps the cache it opened
        pool.cache = _open_cache(cache)
    for name in llm:
        resolved[name].model_config = config
        resolved[name].pool = pool
        resolved[name].sample = sample
    return JudgeRun(config, pool, price)


def _open_cache(cache):
    if cache is True:
        from evalkit.judges.cache import JudgeCache

        return JudgeCache()
    return None if cache is False or cache is None else cache


def sample_judgments(df: pd.DataFrame, k: int, **options) -> list[pd.DataFrame]:
    """Judge every row ``k`` times (samples 0..k-1, each cached on its own): the material of judge-noise
    measures (per-row spread, pass/fail flips, pass^k). ``options`` are those of ``evaluate``."""
    if k < 1:
        raise ValueError("k must be at least 1")
    return [evaluate(df, sample=index, **options) for index in range(k)]


# Progress bars that stay out of the way: tqdm (the notebook variant in Jupyter), shown only when a run
# takes more than a moment.
class _Silent:
    def update(self, n: int = 1) -> None:
        pass


@contextlib.contextmanager
def progress_bar(total: int, enabled: bool | None = None, desc: str = "evaluating"):
    """A tqdm bar over ``total`` row evaluations; ``enabled=None`` shows it after 1 s of work."""
    if enabled is False or total == 0:
        yield _Silent()
        return
    from tqdm.auto import tqdm

    tqdm.monitor_interval = 0  # no monitor thread: it would outlive the bar and make forking unsafe
    bar = tqdm(total=total, desc=desc, unit="row", delay=0 if enabled else 1.0, leave=False)
    try:
        yield bar
    finally:
        bar.close()
