"""professional_tone: an LLM judge of the agent's tone (1-5), prompt in professional_tone.prompty."""

import json
from pathlib import Path


class ProfessionalToneEvaluator:
    def __init__(self, *, model_config, threshold=3, options=None, **_):
        from promptflow.client import load_flow

        config = dict(model_config)
        # load_flow picks its connection class from "type", which the configuration does not carry.
        config.setdefault("type", "azure_openai" if "azure_endpoint" in config else "openai")
        self._flow = load_flow(
            source=str(Path(__file__).with_suffix(".prompty")), model={"configuration": config}
        )

    def __call__(self, *, prompt: str = "", response: str = "", **_) -> dict:
        # promptflow reserves "prompt", so the template calls the user's message user_prompt.
        answer = self._flow(user_prompt=prompt, response=response)
        data = json.loads(answer) if isinstance(answer, str) else answer
        return {"score": data["score"], "reason": data.get("reason", "")}
