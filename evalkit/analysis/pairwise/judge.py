"""The pairwise judge: its prompt, its calls through a judge pool, and the strict reading of its answers.

The prompt is evalkit's ``pairwise.prompty`` (beside this module) or a custom ``.prompty`` that declares the
inputs ``query``, ``response_a`` and ``response_b`` (``expected_response`` optional) and asks for
``{"winner": "A" | "B" | "tie", "reason"}``. It is rendered by ``evalkit.judges.prompty`` (role lines inside the
agent's texts neutralised) and sent with the file's model parameters to the judge model through one openai
client, on a ``JudgePool``: bounded concurrency, retries, the judge cache (a re-run is free; the key holds the
prompt's hash, the model, both responses in their order), and ``judges.metering`` counting every request and
its tokens.

An answer is read strictly (``judges.strict_answers``): a JSON object without repeated keys whose ``winner``
is ``A``, ``B`` or ``tie`` (any case, blanks around ignored); anything else is an error for that order,
``judgeOutputUnparseable``, and the row is not counted.

May import: ``evalkit.judges``, ``evalkit.documents``, ``evalkit.errors``.
"""

from __future__ import annotations

import hashlib
import threading
from dataclasses import dataclass
from pathlib import Path

from evalkit.documents.redaction import redact_url
from evalkit.errors import EvalkitError
from evalkit.judges.cache import cache_key
from evalkit.judges.failures import JudgeFailure
from evalkit.judges.prompty import Prompty, load
from evalkit.judges.strict_answers import cut_reason, json_answer

BUILTIN = Path(__file__).with_name("pairwise.prompty")
REQUIRED_INPUTS = ("query", "response_a", "response_b")
WINNERS = ("A", "B", "tie")


@dataclass
class Order:
    """One judgment: the question, the response shown first (as A) and second (as B), the reference."""

    query: str
    first: str
    second: str
    reference: str = ""


class PairwiseJudge:
    """A pairwise prompt on a judge model; ``judge(orders)`` returns one outcome per order."""

    def __init__(self, model_config: dict, prompty: str | Path | None = None):
        self.path = Path(prompty) if prompty is not None else BUILTIN
        self.prompt = read_prompt(self.path)
        self.model_config = model_config
        digest = hashlib.sha256(self.path.read_bytes()).hexdigest()[:16]
        kind = "builtin" if prompty is None else f"custom:{self.path.stem}"
        self.identity = f"pairwise:{kind}@{digest}"
        self._client = None
        self._lock = threading.Lock()

    @property
    def model_name(self) -> str | None:
        return self.model_config.get("azure_deployment") or self.model_config.get("model")

    def calls(self, orders: list[Order], timeout: float):
        from evalkit.judges.pool import Call

        model = {k: redact_url(v) for k, v in self.model_config.items() if "key" not in k.lower()}
        return [
            Call(
                run=self._runner(order, timeout),
                key=cache_key(evaluator=self.identity, model=model, inputs=order.__dict__),
                identity=self.identity,
            )
            for order in orders
        ]

    def _runner(self, order: Order, timeout: float):
        def run() -> dict:
            client, model = self._shared_client(timeout)
            messages = self.prompt.render(
                query=order.query,
                response_a=order.first,
                response_b=order.second,
                expected_response=order.reference,
            )
            reply = client.chat.completions.create(model=model, messages=messages, **self.prompt.parameters)
            return read_answer(reply.choices[0].message.content if reply.choices else None)

        return run

    def _shared_client(self, timeout: float):
        from evalkit.judges.models import judge_client

        with self._lock:
            if self._client is None:
                self._client = judge_client(self.model_config, timeout=timeout)
        return self._client


def read_prompt(path: Path) -> Prompty:
    """The pairwise ``.prompty`` at ``path``; an ``EvalkitError`` naming the file and the fix otherwise."""
    if not path.is_file():
        raise EvalkitError(
            f"pairwise judge {path}: no such file: give a .prompty file (or leave --judge out)"
        )
    try:
        prompt = load(path)
    except (ValueError, OSError) as exc:
        raise EvalkitError(f"pairwise judge {path}: {exc}") from None
    except Exception as exc:  # noqa: BLE001 - YAML errors of a user's file
        raise EvalkitError(f"pairwise judge {path}: its front matter is not valid YAML ({exc})") from None
    missing = [name for name in REQUIRED_INPUTS if name not in prompt.inputs]
    if missing:
        raise EvalkitError(
            f"pairwise judge {path} does not declare the input(s) {', '.join(missing)}: a pairwise .prompty "
            f"declares {', '.join(REQUIRED_INPUTS)} (and optionally expected_response) under inputs: and asks "
            'for {"winner": "A" | "B" | "tie", "reason": ...}'
        )
    return prompt


def read_answer(content: str | None) -> dict:
    """``{"winner": "A" | "B" | "tie", "reason"}`` from the judge's answer text; ``JudgeFailure`` otherwise."""
    answer = json_answer(content, "the pairwise verdict")
    winner = answer.get("winner") if isinstance(answer, dict) else None
    picked = (
        {w.casefold(): w for w in WINNERS}.get(winner.strip().casefold()) if isinstance(winner, str) else None
    )
    if picked is None:
        raise JudgeFailure(
            f'could not parse the pairwise verdict: "winner" must be "A", "B" or "tie", the judge answered '
            f"{str(content)[:200]!r}",
            "judgeOutputUnparseable",
        )
    return {"winner": picked, "reason": cut_reason(str(answer.get("reason") or ""))}
