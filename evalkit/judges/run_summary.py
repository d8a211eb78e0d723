"""The judge side of one run: the model, the shared pool, and what the run's judges cost (``JudgeRun``).

``evalkit.evaluate`` (and each Spark partition) builds one ``JudgeRun`` when the run has LLM judges; its
``summary`` is the ``dev.evalkit.judge`` block of results.json, the ``Judge:`` line and the report's facts:
the model (never its key), each judge's prompt hash and model parameters, the requests the model received
(``metering``), cache hits, throttling, tokens and the cost at the run's prices (batch prices for a batch run).

The resolved evaluators are read by duck typing (``is_llm``, ``identity``, ``tokens``, ``model_parameters``),
so this module needs nothing above the judges layer.

May import: ``evalkit.judges``.
"""

from __future__ import annotations


class JudgeRun:
    """The judge side of a run: the model, the shared pool; what it cost."""

    def __init__(self, config: dict, pool, price=None):
        self.config = config
        self.pool = pool
        self.price = price  # a judges.prices.Price, or None: "price not set"
        self.batch: dict | None = None  # the batch report of a batch run (``judges.batch``)

    def summary(self, resolved: dict) -> dict:
        from evalkit.judges.models import describe
        from evalkit.judges.prices import file_price, judge_cost

        tokens = {name: dict(ev.tokens) for name, ev in resolved.items() if getattr(ev, "is_llm", False)}
        judge = {
            "model": describe(self.config),
            "model_name": self.config.get("azure_deployment") or self.config.get("model"),
            "prompt_hashes": {
                name: ev.identity for name, ev in resolved.items() if getattr(ev, "is_llm", False)
            },
            **_judge_parameters(resolved),
            # requests sent (``judges.metering``), retries included: what the model server received
            "calls": self.pool.usage.requests if hasattr(self.pool, "usage") else self.pool.calls_made,
            "cache_hits": self.pool.cache_hits,
            "throttled": self.pool.limit.cuts,
            "tokens": tokens,
            "prompt_tokens": sum(t["prompt"] for t in tokens.values()),
            "completion_tokens": sum(t["completion"] for t in tokens.values()),
        }
        judge.update({"batch": self.batch} if self.batch else {})
        judge["cost"] = judge_cost(judge, self.price or file_price(judge["model_name"]), bool(self.batch))
        return judge


def _judge_parameters(resolved: dict) -> dict:
    """The model parameters of each LLM judge's prompt, and those every judge shares (for provenance)."""
    by_evaluator = {}
    for name, ev in resolved.items():
        if getattr(ev, "is_llm", False):
            try:
                by_evaluator[name] = ev.model_parameters()
            except Exception:  # noqa: BLE001 - provenance must never fail a run
                by_evaluator[name] = {}
    shared = {}
    if by_evaluator:
        first, *rest = by_evaluator.values()
        shared = {k: v for k, v in first.items() if all(other.get(k) == v for other in rest)}
    return {"parameters": shared, "parameters_by_evaluator": by_evaluator}
