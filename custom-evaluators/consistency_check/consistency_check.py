"""consistency_check: an LLM judge of contradictions (1-5) that asks the model several times and keeps the
median, so one noisy judgment does not decide the result. ``options.samples`` (default 3) sets how many."""

import json
import statistics
from pathlib import Path


class ConsistencyCheckEvaluator:
    def __init__(self, *, model_config, threshold=3, options=None, **_):
        from promptflow.client import load_flow

        config = dict(model_config)
        config.setdefault("type", "azure_openai" if "azure_endpoint" in config else "openai")
        self._flow = load_flow(
            source=str(Path(__file__).with_suffix(".prompty")), model={"configuration": config}
        )
        self._samples = max(1, int((options or {}).get("samples", 3)))

    def __call__(self, *, prompt: str = "", response: str = "", context: str = "", **_) -> dict:
        scores, reasons = [], []
        for _sample in range(self._samples):
            answer = self._flow(user_prompt=prompt, response=response, context=context)
            data = json.loads(answer) if isinstance(answer, str) else answer
            scores.append(int(data["score"]))
            reasons.append(str(data.get("reason", "")))
        median = statistics.median_low(scores)  # an integer that one of the samples gave
        return {"score": median, "reason": f"median of {scores}: {reasons[scores.index(median)]}"}
