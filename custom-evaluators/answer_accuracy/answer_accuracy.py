"""answer_accuracy: an LLM judge (1-5) of the answer against the item's expected_response."""

import json
from pathlib import Path


class AnswerAccuracyEvaluator:
    def __init__(self, *, model_config, threshold=3, options=None, **_):
        from promptflow.client import load_flow

        config = dict(model_config)
        config.setdefault("type", "azure_openai" if "azure_endpoint" in config else "openai")
        self._flow = load_flow(
            source=str(Path(__file__).with_suffix(".prompty")), model={"configuration": config}
        )

    def __call__(
        self, *, prompt: str = "", response: str = "", expected_response: str = "", context: str = "", **_
    ):
        if not expected_response.strip():
            return {"error": "answer_accuracy needs the item's expected_response"}
        answer = self._flow(
            user_prompt=prompt, response=response, expected_response=expected_response, context=context
        )
        data = json.loads(answer) if isinstance(answer, str) else answer
        return {"score": data["score"], "reason": data.get("reason", "")}
