"""Span evaluators named in an eval document's evaluator map.

A custom evaluator folder whose module defines ``lambda_handler(event, context)``, or that holds AWS's
sample layout ``lambda_function.py`` (``lambda_handler`` or ``handler``), is an AgentCore-style span
evaluator; an evaluator's ``handler`` option (``"module.function"``, Lambda's handler setting) names another
handler in its folder. Named in a document, it runs on the spans the agent emitted while answering each row (captured by
``evalkit run --agent``): one call per session, trace or tool-call span of that row, as its level says. The row's
score is the lowest ``value`` of those calls, and it passes when that meets the threshold (default 1.0) and,
for an evaluator that declares its passing labels (``PASSING_LABELS``), every call's label is one of them
(``NO_OUTPUT``, ``OUT_OF_ORDER``, ``PII_LEAK``, ``DRIFT`` never pass, whatever the threshold); the reason
lists each call's label and explanation, and names a label that does not pass. A call that errors, or returns a label without a value,
makes the row's result an error.

An LLM-as-judge span evaluator (``custom-evaluators/<name>/<name>.json``) is named the same way: it is an LLM
evaluator of the run (the engine gives it the judge model and the run's judge pool, so no judge model
configured stops the run with exit code 3 before any work), judged through the judge cache, its tokens counted
with the run's; its values are the rating scale's 0-1 values, so the default threshold 1.0 asks for the top
rating.
"""

from __future__ import annotations

import numpy as np

from evalkit.evaluators.base import verdict_frame
from evalkit.spans.lambdas.passing_rule import passes

NO_SPANS = (
    "no spans were captured for this item: span evaluators read the agent's OpenTelemetry spans, so run the "
    "document with an agent (evalkit run DOC --agent TARGET)"
)


class SpanDocumentEvaluator:
    """Adapts a Lambda-style span evaluator to the column-wise evaluator protocol."""

    has_threshold = True
    requires: tuple[str, ...] = ()

    def __init__(self, evaluator):
        self.evaluator = evaluator
        self.name = self.key = self.score_field = evaluator.name
        # LLM-as-judge span evaluators take part in the run's judge set-up (model, pool, tokens, provenance).
        self.is_llm = bool(getattr(evaluator, "is_llm", False))
        self.identity = getattr(evaluator, "identity", "")
        self.model_config: dict | None = None
        self.pool = None
        self.sample = 0
        self.on_row_done = None
        self.tokens = {"prompt": 0, "completion": 0}
        self._handlers: dict = {}

    def model_parameters(self) -> dict:
        return dict(getattr(self.evaluator, "parameters", {}))

    def _judges(self):
        if not self.is_llm:
            return None
        from evalkit.spans.llm_judges.judge_runner import SpanJudges

        return SpanJudges(self.model_config, pool=self.pool)

    def _configured(self, handler):
        """The evaluator with the Lambda handler an evaluator's ``handler`` option names (``module.function``),
        loaded once per handler; without one, the evaluator as loaded."""
        if not handler or getattr(self.evaluator, "path", None) is None:
            return self.evaluator
        if handler not in self._handlers:
            from evalkit.spans import load_span_evaluator

            folder = self.evaluator.path.parent
            self._handlers[handler] = load_span_evaluator(self.evaluator.name, folder.parent, handler=handler)
        return self._handlers[handler]

    def score(self, rows, configs: list[dict]):
        from evalkit.spans import evaluate_spans
        from evalkit.spans.reading.loading import from_documents

        n = len(rows)
        scores = np.full(n, np.nan)
        thresholds = np.array([float(c.get("threshold", 1.0)) for c in configs])
        reasons, errors, codes = [None] * n, [None] * n, [None] * n
        refused = np.zeros(n, dtype=bool)  # a call's label is not one the evaluator declares passing
        spans_column = rows["spans"].tolist() if "spans" in rows else [[]] * n
        judges = self._judges()
        for i, (spans, config) in enumerate(zip(spans_column, configs)):
            try:
                if not spans:
                    errors[i], codes[i] = NO_SPANS, "evaluatorConfigurationError"
                    continue
                options = config.get("options") or {}
                level = options.get("level")
                try:
                    evaluator = self._configured(options.get("handler"))
                    evaluator = evaluator.with_level(level) if level else evaluator
                    results = evaluate_spans(from_documents(spans), [evaluator], judges=judges)
                except Exception as exc:  # noqa: BLE001 - a bad level or broken spans: this row's error
                    errors[i], codes[i] = f"{type(exc).__name__}: {exc}", "evaluatorError"
                    continue
                scores[i], reasons[i], errors[i], codes[i] = _combine(results, evaluator.level, evaluator)
                refused[i], reasons[i] = _label_check(
                    results, evaluator, reasons[i], scores[i] >= thresholds[i]
                )
            finally:
                if self.on_row_done is not None:
                    self.on_row_done()
        if judges is not None:
            for key in ("prompt", "completion"):
                self.tokens[key] += judges.tokens[key]
        frame = verdict_frame(rows.index, scores, thresholds, reasons, errors, codes)
        frame.loc[refused & (frame["result"] == "pass").to_numpy(), "result"] = "fail"
        return frame


def _combine(results: list[dict], level: str, evaluator=None):
    """(score, reason, error, code) of one row from its span-evaluation results. A categorical LLM judge's
    results carry a label and no value (as AgentCore's do): a passing label scores 1.0, another 0.0."""
    if not results:
        return np.nan, None, f"nothing to evaluate at level {level} in this item's spans", "evaluatorError"
    failed = [r for r in results if "errorCode" in r]
    if failed:
        first = failed[0]
        return np.nan, None, f"{first['errorCode']}: {first.get('errorMessage', '')}", "evaluatorError"
    values = [r.get("value") for r in results]
    if getattr(evaluator, "kind", None) == "categorical":
        values = [1.0 if r.get("label") in evaluator.passing_labels else 0.0 for r in results]
    if any(not isinstance(v, (int, float)) or isinstance(v, bool) for v in values):
        label = next(r["label"] for r, v in zip(results, values) if not isinstance(v, (int, float)))
        return (
            np.nan,
            None,
            f"returned label {label!r} without a value to compare with the threshold",
            ("invalidEvaluatorResult"),
        )
    reason = "; ".join(
        f"{r['label']}: {r['explanation']}" if r.get("explanation") else r["label"] for r in results
    )
    return float(min(values)), reason[:2048], None, None


def _label_check(
    results: list[dict], evaluator, reason: str | None, value_passes: bool
) -> tuple[bool, str | None]:
    """(whether a call's label is not among the evaluator's passing labels, the reason). The reason says so
    only where the value alone would have passed the threshold. An LLM judge's row is decided by its threshold
    alone (its values are the scale's, chosen by the document)."""
    labels = None if getattr(evaluator, "is_llm", False) else getattr(evaluator, "passing_labels", None)
    if labels is None or not results or any("errorCode" in r for r in results):
        return False, reason
    failing = sorted({str(r.get("label")) for r in results if not passes(r, labels)})
    if not failing:
        return False, reason
    if not value_passes:
        return True, reason
    note = f"label {', '.join(failing)} is not passing (passing: {', '.join(sorted(labels))})"
    return True, f"{note}; {reason}"[:2048] if reason else note
