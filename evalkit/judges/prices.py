"""What a run's judge tokens cost in US dollars, from prices the user sets; never a guess.

evalkit ships no price list: prices change, differ by region, contract and deployment, and a wrong default is
worse than none. The user gives them either way:

- ``EVALKIT_PRICES``: the path of a JSON or TOML file (``.toml`` is read as TOML, anything else as JSON) that
  maps a judge model name (the run's ``OPENAI_MODEL``, or the Azure OpenAI deployment name) to its prices in
  USD per 1 million tokens::

      {"gpt-4o-mini": {"input": 0.15, "output": 0.60, "batch_input": 0.075, "batch_output": 0.30},
       "my-gpt-4o-deployment": {"input": 2.50, "output": 10.00}}

  ``input`` (prompt tokens) and ``output`` (completion tokens) are required; ``batch_input`` /
  ``batch_output`` are the prices of calls made through a batch API (``evalkit run --batch``; optional: they
  default to half the ordinary prices, the discount of OpenAI's and Azure OpenAI's Batch API). A name matches exactly, else ignoring case.
- ``--price IN/OUT`` on ``evalkit run`` (``evaluate(price=(IN, OUT))``): the run's judge model costs IN and OUT
  USD per 1M prompt / completion tokens; it wins over the file.

A model with no price is "price not set", never $0. Mistakes in the file (not JSON / TOML, a price that is not
a non-negative number, a key that is not a price) are an ``EnvironmentConfigError`` naming the file, the
model and the fix, raised before any judge call.

May import: ``evalkit.errors``.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from evalkit.documents.json_input import parse_json_text
from evalkit.errors import EnvironmentConfigError

PRICES_VARIABLE = "EVALKIT_PRICES"
PRICE_KEYS = ("input", "output", "batch_input", "batch_output")
NOT_SET = "price not set"
#: A batch price not given is this share of the ordinary one (OpenAI's and Azure OpenAI's batch discount).
BATCH_SHARE = 0.5
EXAMPLE = '{"gpt-4o-mini": {"input": 0.15, "output": 0.60}}'


@dataclass(frozen=True)
class Price:
    """USD per 1M tokens, and where the figure came from (the file, or ``--price``)."""

    input: float
    output: float
    batch_input: float | None = None
    batch_output: float | None = None
    source: str = ""

    def cost(self, prompt: int, completion: int, *, batch: bool = False) -> float:
        """USD for ``prompt`` and ``completion`` tokens (at the batch prices when ``batch``)."""
        rate_in, rate_out = self.input, self.output
        if batch:
            rate_in = self.batch_input if self.batch_input is not None else self.input * BATCH_SHARE
            rate_out = self.batch_output if self.batch_output is not None else self.output * BATCH_SHARE
        return (prompt * rate_in + completion * rate_out) / 1_000_000


def _number(value: Any, where: str) -> float:
    if (
        isinstance(value, bool)
        or not isinstance(value, (int, float))
        or not math.isfinite(value)
        or value < 0
    ):
        raise EnvironmentConfigError(
            f"{where} is {value!r}: a price is a non-negative number of US dollars per 1M tokens, e.g. {EXAMPLE}"
        )
    return float(value)


def _entry(model: str, value: Any, where: str) -> Price:
    if not isinstance(value, dict):
        raise EnvironmentConfigError(
            f'{where}: model {model!r} must map to {{"input": ..., "output": ...}} (USD per 1M tokens), '
            f"not {type(value).__name__}; e.g. {EXAMPLE}"
        )
    unknown = sorted(set(value) - set(PRICE_KEYS))
    if unknown:
        raise EnvironmentConfigError(
            f"{where}: model {model!r} has {', '.join(map(repr, unknown))}, which is not a price; the keys are "
            f"{', '.join(PRICE_KEYS)} (USD per 1M tokens)"
        )
    missing = [k for k in ("input", "output") if k not in value]
    if missing:
        raise EnvironmentConfigError(
            f"{where}: model {model!r} has no {' and no '.join(map(repr, missing))} price; give both, e.g. {EXAMPLE}"
        )
    prices = {k: _number(value[k], f"{where}: {model!r} {k}") for k in PRICE_KEYS if k in value}
    return Price(**prices, source=where)


def read_prices(path: str | os.PathLike) -> dict[str, Price]:
    """The price table of a JSON / TOML file (see the module docstring)."""
    source = Path(path)
    try:
        text = source.read_text(encoding="utf-8")
    except OSError as exc:
        raise EnvironmentConfigError(
            f"{PRICES_VARIABLE}={source}: cannot read the price file ({exc.strerror or exc}); "
            f"point it at a JSON or TOML file, or unset it"
        ) from None
    try:
        if source.suffix.lower() == ".toml":
            import tomllib

            table = tomllib.loads(text)
        else:
            table = parse_json_text(text, limit=None)
    except ValueError as exc:  # tomllib's TOMLDecodeError, or the bounded JSON parser's JsonInputError
        kind = "TOML" if source.suffix.lower() == ".toml" else "JSON"
        raise EnvironmentConfigError(
            f"{source}: the price file is not valid {kind} ({exc}); e.g. {EXAMPLE}"
        ) from None
    if not isinstance(table, dict):
        raise EnvironmentConfigError(
            f"{source}: the price file must be an object of model -> prices, e.g. {EXAMPLE}"
        )
    return {str(model): _entry(str(model), value, str(source)) for model, value in table.items()}


def parse_price(text: str) -> Price:
    """``--price IN/OUT``: USD per 1M prompt / completion tokens (``0.15/0.60``)."""
    parts = str(text).split("/")
    try:
        values = [float(p) for p in parts]
    except ValueError:
        values = []
    if len(values) != 2 or not all(math.isfinite(v) and v >= 0 for v in values):
        raise EnvironmentConfigError(
            f"--price {text!r}: give the input and output prices in USD per 1M tokens as IN/OUT, e.g. --price 0.15/0.60"
        )
    return Price(values[0], values[1], source="--price")


def price_for(model: str | None, price: Price | tuple | None = None) -> Price | None:
    """The price of judge model ``model``: ``price`` when given (a ``Price`` or ``(IN, OUT)``), else the entry of
    the ``EVALKIT_PRICES`` file (exact name, else ignoring case), else None."""
    if isinstance(price, Price):
        return price
    if price is not None:
        given = [_number(v, "price") for v in price]
        if len(given) != 2:
            raise EnvironmentConfigError(f"price={price!r}: give (input, output) in USD per 1M tokens")
        return Price(given[0], given[1], source="price")
    path = os.environ.get(PRICES_VARIABLE, "").strip()
    if not path or not model:
        return None
    table = read_prices(path)
    if model in table:
        return table[model]
    lowered = {name.casefold(): value for name, value in table.items()}
    return lowered.get(model.casefold())


def file_price(model: str | None) -> Price | None:
    """The ``EVALKIT_PRICES`` entry of ``model``; None when unset or unreadable (provenance never fails a run)."""
    try:
        return price_for(model)
    except EnvironmentConfigError:
        return None


def judge_cost(judge: dict, price: Price | None, batch: bool = False) -> dict:
    """The ``cost`` entry of a run's judge summary: USD from its tokens at ``price`` (its batch price for a
    batch run), or "price not set"."""
    prompt = int(judge.get("prompt_tokens") or 0)
    completion = int(judge.get("completion_tokens") or 0)
    if price is None:
        return {"usd": None, "note": NOT_SET, "model": judge.get("model_name")}
    source = price.source
    if source not in ("--price", "price"):  # a file: its name only, results get shared
        source = f"{PRICES_VARIABLE} ({Path(source).name})"
    return {
        "usd": round(price.cost(prompt, completion, batch=batch), 6),
        "input_per_1m": price.input,
        "output_per_1m": price.output,
        **({"batch": True} if batch else {}),
        "source": source,
        "model": judge.get("model_name"),
    }


def cost_text(cost: Any) -> str:
    """``$0.0123`` (to 4 decimals below a dollar, to cents above) or "price not set", for one line of text."""
    usd = cost.get("usd") if isinstance(cost, dict) else None
    if not isinstance(usd, (int, float)) or isinstance(usd, bool) or not math.isfinite(usd):
        return NOT_SET
    return f"${usd:,.2f}" if usd >= 1 else f"${usd:.4f}"
