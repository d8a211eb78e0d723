"""``align``: the search for a judge prompt that agrees better with human labels, measured on held-out rows.

    import evalkit
    result = evalkit.align("Relevance", "data/feedbackqa.labels.json")   # the document beside the labels
    result                                  # renders in a notebook: held-out before/after and the verdict
    print(result.table())                   # the same as text (what ``evalkit align`` prints)
    evalkit.align("Relevance", labels, df, dry_run=True)                 # what it would cost, no calls

The steps: the labelled rows of the judge are split by item into an optimisation set and a held-out set
(``split``); the judge as it is scores the optimisation rows; each round the optimiser model is shown the current
best prompt and the optimisation rows (``proposals``), its answer becomes up to three variants, each scored on the
optimisation rows; the variant with the best agreement (kappa, then exact agreement) is kept and the next round
starts from it. A round without a better variant, a round whose optimiser proposes nothing new, or the call budget
ends the search. Finally the original and the chosen judge score the held-out rows, which no prompt has seen
(``report``: the before/after table and the verdict), and the chosen prompt is written as a new custom evaluator
(``writing``).

May import: ``evalkit.engine`` and everything below it, and ``evalkit.analysis`` (calibration, agreement, labels).
"""

from __future__ import annotations

import math
import os
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from evalkit.analysis.agreement import paired_difference
from evalkit.analysis.alignment.budget import Plan, estimate_tokens
from evalkit.analysis.alignment.judging import JudgeSource, judge_source, score_prompt
from evalkit.analysis.alignment.prompts import PromptSpec, render_prompt
from evalkit.analysis.alignment.proposals import ask_optimiser, optimiser_messages, variants
from evalkit.analysis.alignment.report import SHOWN_METRICS, Alignment
from evalkit.analysis.alignment.split import split_items
from evalkit.analysis.alignment.writing import aligned_name, write_aligned
from evalkit.analysis.calibration import calibrate
from evalkit.analysis.labels import Labels, label_matches, labels_frame
from evalkit.analysis.statistics import DEFAULT_CONFIDENCE, DEFAULT_RESAMPLES
from evalkit.errors import EnvironmentConfigError, EvalkitError

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["align"]

VARIANTS_PER_ROUND = 3


def _document(labels: Any, document: Any) -> pd.DataFrame:
    from evalkit.documents.case_table import load

    if document is None:
        if isinstance(labels, (str, os.PathLike)) and str(labels).endswith(".labels.json"):
            guess = Path(str(labels)[: -len(".labels.json")] + ".json")
            if guess.is_file():
                return load(guess)
        raise EvalkitError(
            "give the eval document the labels are for (document=..., or DOCUMENT on the command line)"
        )
    if isinstance(document, (str, os.PathLike)):
        return load(document)
    return document


def _label_rows(frame: pd.DataFrame, judge: str, evaluator: str | None) -> tuple[pd.DataFrame, str]:
    names = list(dict.fromkeys(frame["evaluator"].tolist()))
    wanted = (
        evaluator
        if evaluator is not None
        else (judge if judge in names else (names[0] if len(names) == 1 else None))
    )
    if wanted is None or wanted not in names:
        raise EvalkitError(
            f"no human labels for judge {judge!r} (labels exist for: {', '.join(map(repr, names)) or 'none'}); "
            "pass evaluator='<name>' (--evaluator) to align it on those"
        )
    return frame[frame["evaluator"] == wanted], wanted


def _turn(value: Any) -> int:
    import pandas as pd

    return -1 if value is None or pd.isna(value) else int(value)


def _paired(df: pd.DataFrame, human: pd.DataFrame, on: str) -> pd.DataFrame:
    """The document rows that have a usable label (same item and turn, and the labelled prompt when recorded)."""
    human = human[human[on].notna()]
    by_key = {(int(r.item), _turn(r.turn)): r for r in human.itertuples()}
    keep = []
    for pos, (item, turn, prompt) in enumerate(zip(df["item"], df["turn"], df["prompt"])):
        label = by_key.get((int(item), _turn(turn)))
        if label is not None and label_matches({"prompt_sha256": label.prompt_sha256}, prompt):
            keep.append(pos)
    return df.iloc[keep].copy()


def _metrics(cal, name: str) -> dict[str, tuple[float, float, float]]:
    row = cal.table.loc[cal.judge_name(name)] if len(cal.table) else None
    if row is None:
        return {m: (math.nan,) * 3 for m, _ in SHOWN_METRICS}
    return {m: (float(row[m]), float(row[f"{m}_low"]), float(row[f"{m}_high"])) for m, _ in SHOWN_METRICS}


def _first_error(scored: pd.DataFrame, name: str) -> str:
    column = f"{name}_error"
    if column in scored.columns:
        messages = [m for m in scored[column].tolist() if isinstance(m, str) and m]
        if messages:
            return messages[0]
    return "no message"


class _Search:
    """One alignment's state: the judge, the rows, the labels, the stage folder and what it has spent."""

    def __init__(self, source: JudgeSource, labels: pd.DataFrame, label_ev: str, on: str, options: dict):
        self.source, self.labels, self.label_ev, self.on = source, labels, label_ev, on
        self.options = options
        self.cost = {"judge_calls": 0, "optimizer_calls": 0, "prompt_tokens": 0, "completion_tokens": 0}
        self.cost.update({"optimizer_prompt_tokens": 0, "optimizer_completion_tokens": 0})
        self.stage = Path(tempfile.mkdtemp(prefix="evalkit-align-"))
        self.runs = 0

    def judge(self, rows: pd.DataFrame, prompt: str | None, name: str, *, resamples: int = 0):
        """Score ``rows`` with ``prompt`` (None: the judge as it is) and calibrate against the labels."""
        self.runs += 1
        scored, summary = score_prompt(
            rows,
            self.source,
            prompt,
            self.stage / f"run{self.runs}",
            model_config=self.options["model_config"],
            concurrency=self.options["concurrency"],
            run_name=None if prompt is None else name,
        )
        self.cost["judge_calls"] += int(summary.get("calls") or 0)
        self.cost["prompt_tokens"] += int(summary.get("prompt_tokens") or 0)
        self.cost["completion_tokens"] += int(summary.get("completion_tokens") or 0)
        column = self.source.name if prompt is None else name
        labels = self.labels[self.labels["item"].isin(rows["item"].tolist())]
        cal = calibrate(
            scored,
            column,
            labels,
            evaluator=self.label_ev,
            on=self.on,
            resamples=resamples,
            seed=self.options["seed"],
            confidence=self.options["confidence"],
        )
        if not int(cal.table["n"].iloc[0]):
            raise EvalkitError(
                f"the judge gave no usable result on {len(rows)} labelled rows (first error: "
                f"{_first_error(scored, column)}); fix the judge or its model configuration first"
            )
        return cal


def _rank(cal) -> tuple[float, float]:
    row = cal.table.iloc[0]
    kappa = float(row["kappa"])
    return (kappa if math.isfinite(kappa) else -math.inf, float(row["exact"]))


def align(
    judge: str,
    labels: Labels | str | os.PathLike | pd.DataFrame,
    document: str | os.PathLike | pd.DataFrame | None = None,
    *,
    custom_dir: str | os.PathLike | None = None,
    model_config: dict | None = None,
    optimizer_model: str | dict | None = None,
    evaluator: str | None = None,
    holdout: float = 0.5,
    seed: int = 0,
    rounds: int = 2,
    max_calls: int | None = None,
    shots: int = 3,
    dry_run: bool = False,
    write: bool = True,
    price: Any = None,
    optimizer_price: Any = None,
    concurrency: int = 8,
    resamples: int = DEFAULT_RESAMPLES,
    confidence: float = DEFAULT_CONFIDENCE,
) -> Alignment | Plan:
    """Align LLM judge ``judge`` (a custom ``.prompty`` judge or a built-in with a prompt) to human ``labels``.

    Args:
        judge: the evaluator's name. labels: a ``Labels``, a labels file, or a DataFrame of labels.
        document: the eval document (path or case table) the labels are for; default: the document beside a
            ``<stem>.labels.json`` file.
        custom_dir: the project's custom evaluators (default ``./custom-evaluators``): the judge is read and the
            aligned judge written there.
        model_config: the judge model (default: from the environment). optimizer_model: the model that proposes
            prompts: a model / deployment name on the judge's endpoint, a full model configuration, or None (the
            judge's model).
        evaluator: whose labels to use (default: the judge's own, or the only evaluator labelled).
        holdout, seed: the share of labelled items held out, and the split's seed.
        rounds: the most optimiser rounds. max_calls: the most judge calls (None: no cap). shots: the most
            few-shot examples in a variant. dry_run: return the :class:`~evalkit.analysis.alignment.budget.Plan`
            (calls, tokens, dollars) without calling any model. write: write the aligned judge (when a variant won).
        price, optimizer_price: USD per 1M tokens ``(in, out)`` or a ``Price`` (default: ``EVALKIT_PRICES``).
        concurrency: judge calls in flight. resamples, confidence: the bootstrap of the held-out table.

    Returns an :class:`~evalkit.analysis.alignment.report.Alignment` (or the ``Plan`` of a dry run).
    """
    from evalkit.evaluators.names import default_custom_dir
    from evalkit.judges.models import MISSING_JUDGE_MESSAGE, judge_config
    from evalkit.judges.prices import price_for

    if rounds < 1:
        raise EvalkitError(f"rounds must be at least 1, got {rounds}")
    if max_calls is not None and max_calls < 1:
        raise EvalkitError(f"max_calls must be at least 1, got {max_calls}")
    folder = Path(custom_dir) if custom_dir is not None else default_custom_dir()
    source = judge_source(judge, folder)
    df = _document(labels, document)
    frame, label_ev = _label_rows(labels_frame(labels), judge, evaluator)
    on = "score" if frame["score"].notna().any() else "verdict"
    rows = _paired(df, frame, on)
    split = split_items(rows["item"].tolist(), holdout=holdout, seed=seed)
    opt_rows = rows[rows["item"].isin(split.optimise)]
    held_rows = rows[rows["item"].isin(split.held_out)]
    config = model_config if model_config is not None else judge_config()
    opt_config = _optimiser_config(config, optimizer_model)
    plan = _plan(
        judge, source, opt_rows, held_rows, rounds, max_calls, config, opt_config, price, optimizer_price
    )
    if dry_run:
        return plan
    if config is None:
        raise EnvironmentConfigError(MISSING_JUDGE_MESSAGE.format(what=f"aligning {judge}"))
    if max_calls is not None and max_calls < plan.minimum_calls:
        raise EvalkitError(
            f"--max-calls {max_calls} is below the {plan.minimum_calls} judge calls an alignment needs at least "
            f"({len(opt_rows)} optimisation rows once, {len(held_rows)} held-out rows twice); raise it or label fewer rows"
        )
    new_name = aligned_name(judge, folder)
    options = {"model_config": config, "concurrency": concurrency, "seed": seed, "confidence": confidence}
    search = _Search(source, frame, label_ev, on, options)
    best_spec, best_cal = PromptSpec(), search.judge(opt_rows, None, new_name)
    tried = [_tried(0, best_spec, best_cal)]
    stopped = f"{rounds} round(s) done"
    reserve = 2 * len(held_rows)
    for number in range(1, rounds + 1):
        pairs = best_cal.pairs
        if not (pairs["difference"].abs() > 0).any():
            stopped = "no disagreement left on the optimisation set"
            break
        messages = optimiser_messages(render_prompt(source.prompt_text, best_spec), pairs)
        answer, usage = ask_optimiser(opt_config, messages)
        search.cost["optimizer_calls"] += 1
        search.cost["optimizer_prompt_tokens"] += usage["prompt_tokens"]
        search.cost["optimizer_completion_tokens"] += usage["completion_tokens"]
        proposed = variants(best_spec, answer, pairs, shots=shots)
        if not proposed:
            stopped = f"the optimiser proposed nothing new in round {number}"
            break
        improved = False
        for spec in proposed:
            if max_calls is not None and search.cost["judge_calls"] + len(opt_rows) + reserve > max_calls:
                stopped = f"the judge-call budget ({max_calls}) is spent"
                break
            cal = search.judge(opt_rows, render_prompt(source.prompt_text, spec), new_name)
            tried.append(_tried(number, spec, cal))
            if _rank(cal) > _rank(best_cal):
                best_spec, best_cal, improved = spec, cal, True
        if stopped.startswith("the judge-call budget"):
            break
        if not improved:
            stopped = f"no variant of round {number} agreed better than the one before"
            break
    aligned = render_prompt(source.prompt_text, best_spec)
    before = search.judge(held_rows, None, new_name, resamples=resamples)
    after = (
        before
        if best_spec == PromptSpec()
        else search.judge(held_rows, aligned, new_name, resamples=resamples)
    )
    result = _report(
        judge, new_name, on, split, rows, opt_rows, held_rows, before, after, tried, search, source, aligned
    )
    result.chosen, result.stopped, result.confidence = (
        f"{best_spec.kind}: {best_spec.describe()}",
        stopped,
        confidence,
    )
    result.cost.update(_usd(search.cost, config, opt_config, price, optimizer_price, price_for))
    if write and best_spec != PromptSpec():
        result.written = write_aligned(
            folder, new_name, aligned, source.wrapper_for(new_name), result.to_dict()
        )
    if best_spec == PromptSpec():
        result.aligned_name = None
    return result


def _tried(number: int, spec: PromptSpec, cal) -> dict:
    row = cal.table.iloc[0]
    return {
        "round": number,
        "kind": spec.kind,
        "description": spec.describe(),
        "kappa": float(row["kappa"]),
        "exact": float(row["exact"]),
        "n": int(row["n"]),
    }


def _report(
    judge, new_name, on, split, rows, opt_rows, held_rows, before, after, tried, search, source, aligned
):
    b, a = before.pairs, after.pairs
    merged = b.merge(a, on=["item", "turn"], suffixes=("_b", "_a"))

    def values(s):
        return (
            s.to_numpy(dtype=float)
            if on == "score"
            else np.where(s.to_numpy(dtype=object) == "pass", 1.0, 0.0)
        )

    difference = paired_difference(
        values(merged["judge_value_b"]),
        values(merged["judge_value_a"]),
        values(merged["human_value_b"]),
        scale=on == "score",
        resamples=before.resamples,
        seed=before.seed,
        confidence=before.confidence,
    )
    return Alignment(
        judge=judge,
        aligned_name=new_name,
        on=on,
        split={
            "seed": split.seed,
            "holdout": split.holdout,
            "labelled": len(rows),
            "optimise_rows": len(opt_rows),
            "held_out_rows": len(held_rows),
            "optimise_items": list(split.optimise),
            "held_out_items": list(split.held_out),
        },
        before=_metrics(before, before.table.index[0]),
        after=_metrics(after, after.table.index[0]),
        difference={m: difference[m] for m, _ in SHOWN_METRICS},
        variants=tried,
        cost=dict(search.cost),
        original_prompt=source.prompt_text,
        aligned_prompt=aligned,
        chosen="",
        held_out_n=len(merged),
    )


def _optimiser_config(config: dict | None, optimizer_model: str | dict | None) -> dict | None:
    if isinstance(optimizer_model, dict):
        return optimizer_model
    if config is None or optimizer_model is None:
        return config
    key = "azure_deployment" if "azure_endpoint" in config else "model"
    return {**config, key: str(optimizer_model)}


def _model(config: dict | None) -> str:
    return "" if config is None else str(config.get("azure_deployment") or config.get("model") or "")


def _plan(
    judge, source, opt_rows, held_rows, rounds, max_calls, config, opt_config, price, optimizer_price
) -> Plan:
    from evalkit.judges.prices import price_for

    fields = ("prompt", "response", "expected_response", "context")
    all_rows = [opt_rows, held_rows]
    texts = [
        sum(len(str(r.get(f) or "")) for f in fields) for part in all_rows for r in part.to_dict("records")
    ]
    per_row = math.ceil(sum(texts) / max(len(texts), 1) / 4)
    template = estimate_tokens(source.prompt_text)
    shown = sum(
        len(str(r.get("prompt") or "")) + len(str(r.get("response") or ""))
        for r in opt_rows.head(40).to_dict("records")
    )
    return Plan(
        judge=judge,
        optimise_rows=len(opt_rows),
        held_out_rows=len(held_rows),
        rounds=rounds,
        variants_per_round=VARIANTS_PER_ROUND,
        judge_prompt_tokens=template + per_row,
        optimiser_prompt_tokens=template + math.ceil(shown / 4) + 40 * 20,
        max_calls=max_calls,
        judge_price=price_for(_model(config), price),
        optimiser_price=price_for(
            _model(opt_config), optimizer_price if optimizer_price is not None else price
        ),
        judge_model=_model(config),
        optimiser_model=_model(opt_config),
    )


def _usd(cost, config, opt_config, price, optimizer_price, price_for) -> dict:
    """The judge's and the optimiser's cost (``judge_usd`` / ``optimizer_usd``, None without a price) and
    their sum (``usd``, None unless both are priced)."""
    judge_price = price_for(_model(config), price)
    opt_price = price_for(_model(opt_config), optimizer_price if optimizer_price is not None else price)
    judge_usd = (
        None
        if judge_price is None
        else round(judge_price.cost(cost["prompt_tokens"], cost["completion_tokens"]), 6)
    )
    opt_usd = (
        None
        if opt_price is None
        else round(opt_price.cost(cost["optimizer_prompt_tokens"], cost["optimizer_completion_tokens"]), 6)
    )
    if judge_usd is None or opt_usd is None:
        return {"usd": None, "usd_text": "", "judge_usd": judge_usd, "optimizer_usd": opt_usd}
    usd = judge_usd + opt_usd
    return {"usd": round(usd, 6), "usd_text": f"${usd:.4f}", "judge_usd": judge_usd, "optimizer_usd": opt_usd}
