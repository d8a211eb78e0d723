"""What an alignment will cost, before it runs: judge calls, optimiser calls, tokens and dollars.

**Calls.** The original judge scores the optimisation rows once (``O`` calls); each round asks the optimiser
once and scores up to three variants on the optimisation rows (``3 O``); at the end the original and the chosen
judge score the held-out rows (``2 H``). So at most ``O + rounds * 3 O + 2 H`` judge calls and ``rounds``
optimiser calls. ``max_calls`` caps the judge calls: a variant is scored only while the calls it needs and the
``2 H`` of the held-out measurement still fit; a budget below ``O + 2 H`` is refused before any call.

**Tokens** are an estimate (``ceil(characters / 4)``, a common rule of thumb for English): per judge call the
prompt template plus the row's fields, and :data:`COMPLETION_TOKENS` for the answer; a variant with examples adds
their text; per optimiser call the prompt plus the shown rows, and :data:`OPTIMISER_COMPLETION` for the answer.
**Dollars** use the judge model's price and the optimiser's (``evalkit.judges.prices``: ``price=`` or the
``EVALKIT_PRICES`` file); without a price the plan says "price not set".

May import: ``evalkit.judges.prices`` and the standard library.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from evalkit.judges.prices import NOT_SET, Price, cost_text

__all__ = ["COMPLETION_TOKENS", "OPTIMISER_COMPLETION", "Plan", "estimate_tokens"]

#: Estimated completion tokens of one judge answer (a score and a sentence or two of reason).
COMPLETION_TOKENS = 80
#: Estimated completion tokens of one optimiser answer (three guidelines and a paragraph).
OPTIMISER_COMPLETION = 300


def estimate_tokens(text: str) -> int:
    return math.ceil(len(text or "") / 4)


@dataclass
class Plan:
    """The calls and estimated tokens of an alignment (module docs); ``text()`` is the dry run's output."""

    judge: str
    optimise_rows: int
    held_out_rows: int
    rounds: int
    variants_per_round: int
    judge_prompt_tokens: int  # per call, averaged over the rows
    optimiser_prompt_tokens: int
    max_calls: int | None = None
    judge_price: Price | None = None
    optimiser_price: Price | None = None
    judge_model: str = ""
    optimiser_model: str = ""

    @property
    def judge_calls(self) -> int:
        o, h = self.optimise_rows, self.held_out_rows
        full = o + self.rounds * self.variants_per_round * o + 2 * h
        return full if self.max_calls is None else min(full, self.max_calls)

    @property
    def minimum_calls(self) -> int:
        return self.optimise_rows + 2 * self.held_out_rows

    @property
    def optimiser_calls(self) -> int:
        return self.rounds

    def tokens(self) -> dict[str, int]:
        return {
            "judge_prompt": self.judge_calls * self.judge_prompt_tokens,
            "judge_completion": self.judge_calls * COMPLETION_TOKENS,
            "optimiser_prompt": self.optimiser_calls * self.optimiser_prompt_tokens,
            "optimiser_completion": self.optimiser_calls * OPTIMISER_COMPLETION,
        }

    def usd(self) -> float | None:
        t = self.tokens()
        if self.judge_price is None or self.optimiser_price is None:
            return None
        return self.judge_price.cost(t["judge_prompt"], t["judge_completion"]) + self.optimiser_price.cost(
            t["optimiser_prompt"], t["optimiser_completion"]
        )

    def to_dict(self) -> dict[str, Any]:
        usd = self.usd()
        return {
            "judge_calls": self.judge_calls,
            "optimizer_calls": self.optimiser_calls,
            "tokens_estimate": self.tokens(),
            "usd_estimate": None if usd is None else round(usd, 6),
        }

    def text(self) -> str:
        t = self.tokens()
        usd = self.usd()
        price = cost_text({"usd": usd}) if usd is not None else NOT_SET
        cap = f" (capped by --max-calls {self.max_calls})" if self.max_calls is not None else ""
        return "\n".join(
            [
                f"Dry run: aligning {self.judge} would make at most {self.judge_calls} judge calls{cap} and "
                f"{self.optimiser_calls} optimiser calls; nothing was called.",
                f"  {self.optimise_rows} optimisation rows x (1 + {self.rounds} rounds x {self.variants_per_round} "
                f"variants) + 2 x {self.held_out_rows} held-out rows",
                f"  judge model {self.judge_model or '?'}: about {t['judge_prompt']} prompt + "
                f"{t['judge_completion']} completion tokens",
                f"  optimiser model {self.optimiser_model or '?'}: about {t['optimiser_prompt']} prompt + "
                f"{t['optimiser_completion']} completion tokens",
                f"  estimated cost: {price} (tokens estimated as characters / 4)",
            ]
        )
