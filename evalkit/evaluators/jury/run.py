"""Juries run: the jurors of an LLM judge made, run over the rows that declare the jury, and combined.

``plan_juries`` (before any work, so a mistaken declaration stops the run at once) reads each LLM judge's
``jury`` entries, groups its rows by jury, and makes the jurors: a fresh copy of the judge (the same built-in
prompt or ``.prompty`` wrapper) on the juror's model, or the juror's own LLM evaluator (a jury of prompts). Each
juror runs on the run's judge pool with its own model configuration, so its judgments are their own judge-cache
entries (the model is part of the key; another evaluator has another identity), and its requests and tokens
are metered (``judges.metering``) and priced (``judges.prices``: the run's price for the run's model, else the
``EVALKIT_PRICES`` entry of the juror's model). Jurors run one after another over all the rows, each at the
pool's concurrency, as the K samples of ``evaluators.samples`` do; with ``samples=K`` each juror's judgment is
itself K samples combined.

May import: ``evalkit.evaluators``, ``evalkit.judges``, ``evalkit.documents``, ``evalkit.errors``.
"""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from evalkit.documents.redaction import register_secrets_of
from evalkit.errors import EvaluatorConfigError
from evalkit.evaluators.base import error_frame
from evalkit.evaluators.custom.loading import CustomJudge
from evalkit.evaluators.jury.alpha import krippendorff_alpha
from evalkit.evaluators.jury.combine import combine_jurors
from evalkit.evaluators.jury.spec import Juror, Jury, read_jury
from evalkit.evaluators.llm_judges.builtin import BuiltinJudge, LLMJudge
from evalkit.evaluators.llm_judges.samples import judged_k_times

log = logging.getLogger("evalkit.jury")


@dataclass
class Seated:
    """One juror made: its declaration, its evaluator object and what its judgments cost."""

    juror: Juror
    evaluator: Any
    spent: dict = field(default_factory=lambda: {"calls": 0, "cache_hits": 0, "prompt": 0, "completion": 0})


@dataclass
class JuryGroup:
    """The rows of one judge that declare one jury, and its seated jurors."""

    jury: Jury | None  # None: the judge's rows without a jury, judged as usual
    positions: np.ndarray
    seated: list[Seated]
    alpha: dict = field(default_factory=dict)
    frame: pd.DataFrame | None = None


class JuryPlan:
    """An LLM judge's rows by jury; ``score`` returns the result frames the engine attaches."""

    def __init__(self, host: LLMJudge, groups: dict[str, JuryGroup], price=None):
        self.host = host
        self.groups = groups
        self.price = price

    def score(
        self, inputs: pd.DataFrame, configs: list[dict], samples: int, pass_rule: str
    ) -> list[pd.DataFrame]:
        parts = []
        spent = {"prompt": 0, "completion": 0}
        for key, positions in _positions(configs).items():
            group = self.groups[key]
            group.positions = positions
            rows = inputs.iloc[positions]
            own = [_without_jury(configs[p]) for p in positions.tolist()]
            frames = []
            for number, seat in enumerate(group.seated):
                seat.evaluator.on_row_done = self.host.on_row_done if number == 0 else None
                frames.append(_judged(seat, rows, own, samples, pass_rule))
                spent["prompt"] += seat.spent["prompt"]
                spent["completion"] += seat.spent["completion"]
            if group.jury is None:
                parts.append(frames[0])
                continue
            group.frame = combine_jurors(frames, [s.juror.label for s in group.seated], group.jury.combine)
            group.alpha = _agreement(frames)
            parts.append(group.frame)
        self.host.tokens = spent
        return parts

    def summary(self) -> list[dict]:
        """The ``juries`` entry of the run's metadata for this judge: one dict per jury declared."""
        from evalkit.judges.prices import file_price, judge_cost, price_for

        out = []
        for group in self.groups.values():
            if group.jury is None or group.frame is None:
                continue
            jurors = []
            for seat in group.seated:
                model = _model_name(seat.evaluator.model_config or {})
                price = self.price if model == _model_name(self.host.model_config or {}) else None
                price = price_for(model, price) if price is not None else file_price(model)
                spent = {"prompt_tokens": seat.spent["prompt"], "completion_tokens": seat.spent["completion"]}
                jurors.append(
                    {
                        "label": seat.juror.label,
                        "model": model,
                        "evaluator": seat.evaluator.name,
                        "calls": seat.spent["calls"],
                        "cache_hits": seat.spent["cache_hits"],
                        **spent,
                        "cost": judge_cost({**spent, "model_name": model}, price),
                    }
                )
            out.append(
                {
                    "combine": group.jury.combine,
                    "rows": int(len(group.positions)),
                    "jurors": jurors,
                    **group.alpha,
                    **_spreads(group.frame),
                }
            )
        return out


def add_juries(judge: dict, plans: dict[str, JuryPlan], price=None) -> None:
    """Put the juries' summaries into the run's judge summary (``judge["juries"]``) and price the run as the
    sum of its parts: the jurors' tokens each at their model's price, the other judges' at the run's. The total
    is "price not set" when any part is."""
    from evalkit.judges.prices import judge_cost

    judge["juries"] = {name: plan.summary() for name, plan in plans.items()}
    jurors = [j for juries in judge["juries"].values() for jury in juries for j in jury["jurors"]]
    in_juries = {"prompt_tokens": 0, "completion_tokens": 0}
    for juror in jurors:
        for k in in_juries:
            in_juries[k] += juror[k]
    rest = {k: int(judge.get(k) or 0) - v for k, v in in_juries.items()}
    parts = [judge_cost({**rest, "model_name": judge.get("model_name")}, price)] + [j["cost"] for j in jurors]
    if all(isinstance(p.get("usd"), (int, float)) for p in parts):
        judge["cost"] = {
            **judge["cost"],
            "usd": round(sum(p["usd"] for p in parts), 6),
            "note": "jurors at their own models' prices",
        }
    elif judge["cost"].get("usd") is not None:
        unpriced = sorted({str(j["model"]) for j in jurors if j["cost"].get("usd") is None})
        judge["cost"] = {
            "usd": None,
            "note": f"price not set for juror model(s) {', '.join(unpriced)}",
            "model": judge.get("model_name"),
        }


def plan_juries(resolved: dict, configs_of, custom_dir=None, price=None) -> dict[str, JuryPlan]:
    """The jury plan of every LLM judge some row gives a ``jury`` (``configs_of(name)``: its rows' entries)."""
    plans = {}
    for name, host in resolved.items():
        if not getattr(host, "is_llm", False):
            continue
        configs = configs_of(name)
        if not any(_has_jury(c) for c in configs):
            continue
        if not isinstance(host, LLMJudge):
            raise EvaluatorConfigError(
                f"{name}: a jury needs an LLM judge (a built-in such as Relevance or a custom .prompty judge)"
            )
        plans[name] = JuryPlan(host, _groups(name, host, configs, custom_dir), price)
    return plans


def _groups(name: str, host: LLMJudge, configs: list[dict], custom_dir) -> dict[str, JuryGroup]:
    """The judge's juries by key ("" for rows without one), each read, checked and seated."""
    groups: dict[str, JuryGroup] = {}
    for config in configs:
        jury = read_jury(config["jury"], f"evaluator {name}") if _has_jury(config) else None
        key = jury.key if jury else ""
        if key not in groups:
            seated = (
                [Seated(None, host)] if jury is None else [_seat(host, j, custom_dir) for j in jury.jurors]
            )
            groups[key] = JuryGroup(jury, np.array([], dtype=np.int64), seated)
    return groups


def _positions(configs: list[dict]) -> dict[str, np.ndarray]:
    """The positions of ``configs`` by jury key (as ``_groups`` keys them)."""
    by_key: dict[str, list[int]] = {}
    for position, config in enumerate(configs):
        key = read_jury(config["jury"], "").key if _has_jury(config) else ""
        by_key.setdefault(key, []).append(position)
    return {key: np.array(p, dtype=np.int64) for key, p in by_key.items()}


def _has_jury(config: Any) -> bool:
    return isinstance(config, dict) and "jury" in config


def _seat(host: LLMJudge, juror: Juror, custom_dir) -> Seated:
    """The juror's evaluator: another LLM judge by name, or a fresh copy of the host; on the juror's model."""
    if juror.evaluator:
        from evalkit.evaluators.registry import resolve_evaluators

        where = f"jury of {host.name}"
        evaluator = resolve_evaluators({juror.evaluator: where}, custom_dir)[juror.evaluator]
        if not isinstance(evaluator, LLMJudge):
            raise EvaluatorConfigError(
                f"{host.name}: jury juror {juror.evaluator!r} is not an LLM judge: name a built-in LLM judge "
                "or a custom .prompty judge"
            )
    elif isinstance(host, BuiltinJudge):
        evaluator = BuiltinJudge(host.name)
    elif isinstance(host, CustomJudge):
        evaluator = CustomJudge(host.name, host.folder, host.cls)
    else:
        raise EvaluatorConfigError(f"{host.name}: this kind of LLM judge cannot sit in a jury")
    evaluator.model_config = _juror_config(host.model_config or {}, juror, host.name)
    evaluator.pool, evaluator.sample = host.pool, host.sample
    return Seated(juror, evaluator)


def _juror_config(base: dict, juror: Juror, name: str) -> dict:
    """The run's judge configuration with the juror's endpoint or model in place of the run's."""
    if juror.base_url:
        key = ""
        if juror.api_key_env:
            key = os.environ.get(juror.api_key_env, "")
            if not key:
                raise EvaluatorConfigError(
                    f"{name}: jury juror {juror.label!r} reads its key from ${juror.api_key_env}, which is not "
                    "set: export it, or leave api_key_env out for an endpoint without a key"
                )
        config = {"base_url": juror.base_url, "model": juror.model, "api_key": key}
    else:
        config = dict(base)
        if juror.model:
            config["azure_deployment" if "azure_endpoint" in config else "model"] = juror.model
    register_secrets_of(config)
    return config


def _judged(seat: Seated, rows: pd.DataFrame, configs: list[dict], samples: int, rule: str) -> pd.DataFrame:
    """One juror's results over ``rows`` (K samples combined when ``samples`` > 1), its spending noted."""
    evaluator = seat.evaluator
    pool = evaluator.pool
    before, hits = pool.usage.of(evaluator.identity), pool.cache_hits

    def score() -> list[pd.DataFrame]:
        return _score_rows(evaluator, rows, configs)

    frame = judged_k_times(evaluator, samples, rule, score)[0] if samples > 1 else pd.concat(score())
    after = pool.usage.of(evaluator.identity)
    seat.spent = {
        "calls": after.requests - before.requests,
        "cache_hits": pool.cache_hits - hits,
        "prompt": after.prompt - before.prompt,
        "completion": after.completion - before.completion,
    }
    return frame.loc[rows.index]


def _score_rows(evaluator, rows: pd.DataFrame, configs: list[dict]) -> list[pd.DataFrame]:
    """As the engine scores an evaluator: rows missing a required field are errors, a crash is an error."""
    ready = np.ones(len(rows), dtype=bool)
    parts = []
    for column in evaluator.requires:
        values = rows[column].tolist() if column in rows else [""] * len(rows)
        missing = ready & ~np.array([isinstance(v, str) and v.strip() != "" for v in values], dtype=bool)
        if missing.any():
            parts.append(
                error_frame(
                    rows.index[missing],
                    f"{evaluator.name} needs '{column}', which this item does not have",
                    code="evaluatorConfigurationError",
                )
            )
            ready &= ~missing
    if ready.any():
        try:
            parts.append(evaluator.score(rows[ready], [c for c, r in zip(configs, ready) if r]))
        except Exception as exc:  # noqa: BLE001 - one juror's crash must not lose the others' results
            log.debug("juror %s crashed", evaluator.name, exc_info=True)
            parts.append(
                error_frame(rows.index[ready], f"{type(exc).__name__}: {exc}", code="evaluatorError")
            )
    return parts


def _agreement(frames: list[pd.DataFrame]) -> dict:
    """Krippendorff's alpha of the jurors' scores (interval) and verdicts (nominal), and the rows it used."""
    judged = [f["result"].isin(["pass", "fail"]).to_numpy() for f in frames]
    scores = np.array(
        [np.where(j, pd.to_numeric(f["score"], errors="coerce"), np.nan) for f, j in zip(frames, judged)]
    )
    verdicts = np.array(
        [np.where(j, (f["result"] == "pass").astype(float), np.nan) for f, j in zip(frames, judged)]
    )
    return {
        "alpha": _rounded(krippendorff_alpha(scores, "interval")),
        "alpha_verdicts": _rounded(krippendorff_alpha(verdicts, "nominal")),
        "alpha_rows": int((np.sum(~np.isnan(scores), axis=0) >= 2).sum()),
    }


def _spreads(frame: pd.DataFrame | None) -> dict:
    """The mean per-row spread and how many rows the jurors split on (some passed, some failed)."""
    if frame is None:
        return {}
    juries = [d["jury"] for d in frame["details"] if isinstance(d, dict) and "jury" in d]
    split = sum(1 for j in juries if len({r for r in j["results"] if r in ("pass", "fail")}) > 1)
    spreads = [j["spread"] for j in juries]
    return {"mean_spread": round(float(np.mean(spreads)), 6) if spreads else None, "split_rows": split}


def _rounded(value: float | None) -> float | None:
    return None if value is None else round(value, 6)


def _model_name(config: dict) -> str | None:
    return config.get("azure_deployment") or config.get("model")


def _without_jury(config: dict) -> dict:
    return {k: v for k, v in config.items() if k != "jury"} if _has_jury(config) else config
