"""LLM-judged built-ins (Relevance, Coherence, Groundedness, Similarity, ToolCallAccuracy) and the shared
machinery that runs every LLM judge's rows through the run's ``JudgePool``.

Built-ins run through azure-ai-evaluation's evaluator classes with the configured model. The case table maps
onto their inputs as: query = ``prompt``, response = ``response``, ground truth = ``expected_response``;
Groundedness grounds on ``context``, else on the retrieval extracts, else on ``expected_response``.
Results are ``{score, result, threshold, reason}`` on the 1-5 scale (threshold 3 by default).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import numpy as np

from evalkit.documents.evaluator_maps import LLM_BUILTINS
from evalkit.documents.json_input import JsonInputError, parse_json_text
from evalkit.documents.redaction import redact_url
from evalkit.evaluators.base import verdict_frame
from evalkit.judges.cache import cache_key
from evalkit.judges.models import judge_client
from evalkit.judges.pool import Call, JudgeFailure
from evalkit.judges.prompty import BUILTIN_PROMPTS, builtin_prompt, neutralise_role_markers
from evalkit.judges.strict_answers import (
    cut_reason,
    integer_score,
    json_answer,
    not_a_score,
)

EMPTY_RESPONSE = "the agent's response is empty; there is nothing to judge"


class LLMJudge:
    """Base of LLM judges: builds one pool call per row, then reads each outcome into a result row."""

    has_threshold = True
    is_llm = True
    score_field = "score"
    requires: tuple[str, ...] = ()
    default_threshold: float = 3

    def __init__(self):
        self.model_config: dict | None = None
        self.pool = None  # the run's JudgePool, set by the engine
        self.on_row_done: Callable[[], None] | None = None
        self.sample = 0  # which of k repeated judgments this is; part of the cache key
        self.tokens = {"prompt": 0, "completion": 0}

    # What subclasses provide -----------------------------------------------------------------------
    identity: str = ""

    def make_call(self, row: dict, config: dict) -> Callable[[], dict]:
        raise NotImplementedError

    def cache_inputs(self, row: dict, config: dict) -> dict:
        return {k: row[k] for k in ("prompt", "response", "expected_response", "context")}

    def read(self, value: dict) -> tuple[float, str]:
        """(score, reason) from a judge's result dict; raises JudgeFailure when unreadable."""
        raise NotImplementedError

    def model_parameters(self) -> dict:
        """The model parameters of the judge's prompt (temperature, max_tokens, ...), for provenance."""
        return {}

    # The column-wise run -----------------------------------------------------------------------------
    def score(self, rows, configs: list[dict]):
        n = len(rows)
        records = _records(rows)
        thresholds = np.array([float(c.get("threshold", self.default_threshold)) for c in configs])
        scores = np.full(n, np.nan)
        reasons: list[Any] = [None] * n
        errors: list[Any] = [None] * n
        codes: list[Any] = [None] * n
        calls, positions = [], []
        model = _model_identity(self.model_config or {})
        for i, (row, config) in enumerate(zip(records, configs)):
            if not row["response"].strip():
                errors[i], codes[i] = EMPTY_RESPONSE, "emptyAgentResponse"
                continue
            inputs = self.cache_inputs(row, config)
            key = cache_key(evaluator=self.identity, model=model, inputs=inputs, sample=self.sample)
            calls.append(Call(run=self.make_call(row, config), key=key, identity=self.identity))
            positions.append(i)

        def done(index, outcome):
            i = positions[index]
            if outcome.error is not None:
                errors[i], codes[i] = outcome.error, outcome.code
            else:
                try:
                    scores[i], reason = self.read(outcome.value)
                    reasons[i] = cut_reason(reason)
                except JudgeFailure as failure:
                    errors[i], codes[i] = str(failure), failure.code
            if self.on_row_done is not None:
                self.on_row_done()

        self.pool.run(calls, on_done=done)
        self._count_tokens()
        return verdict_frame(rows.index, scores, thresholds, reasons, errors, codes)

    def _count_tokens(self) -> None:
        """The tokens of every request this judge sent through the pool (``judges.metering``): answers
        that could not be read were billed too; cached judgments sent none."""
        spent = self.pool.usage.of(self.identity)
        self.tokens = {"prompt": spent.prompt, "completion": spent.completion}


class BuiltinJudge(LLMJudge):
    """A built-in LLM judge with azure-ai-evaluation's prompt and model parameters for it (the ``.prompty``
    its evaluator class uses, Groundedness in its with-query form), sent through one shared client per run
    and read as the class reads it (``score``, ``reason``, ``status``).

    Why not call the evaluator object per row: it builds a new HTTP client for every call (about 18 ms of
    CPU, which caps a run near 40 judgments a second whatever the concurrency), retries internally up to
    ten times with waits of up to a minute (hiding every 429 from the adaptive limit), and importing it
    costs about 2 s. The conformance tests render every prompt both ways and compare the messages.
    """

    def __init__(self, name: str):
        super().__init__()
        self.name = name
        self.key = LLM_BUILTINS[name]
        self.requires = ("expected_response",) if name == "Similarity" else ()
        self._client = None
        self._tool_evaluator = None
        self._identity = None
        self._lock = threading.Lock()

    @property
    def identity(self) -> str:  # type: ignore[override]
        if self._identity is None:
            from importlib.metadata import version

            self._identity = f"builtin:{self.name}@azure-ai-evaluation=={version('azure-ai-evaluation')}"
        return self._identity

    def make_call(self, row, config):
        inputs = self._inputs(row)
        if self.name == "ToolCallAccuracy":
            return self._tool_call_accuracy(inputs)

        def run() -> dict:
            # Rendered only when the cache has no answer, so a cached re-run costs no prompt work.
            client, model = self._shared_client()
            prompt = builtin_prompt(self.name)
            reply = client.chat.completions.create(
                model=model, messages=prompt.render(**inputs), **prompt.parameters
            )
            return _judge_answer(reply)

        return run

    def model_parameters(self) -> dict:
        if self.name not in BUILTIN_PROMPTS:
            return {}
        return builtin_prompt(self.name).parameters

    def _shared_client(self):
        """One client per run, made by whichever call gets here first."""
        with self._lock:
            if self._client is None:
                self._client = judge_client(self.model_config or {}, timeout=self.pool.timeout)
        return self._client

    def _tool_call_accuracy(self, inputs: dict):
        """ToolCallAccuracy through azure-ai-evaluation's own evaluator object: its prompt formats tool calls
        and definitions in a way of its own, and the calls are few (one per row with tool calls)."""
        if not inputs["tool_calls"]:
            return _needs_tool_calls

        def run() -> dict:
            with self._lock:
                if self._tool_evaluator is None:
                    from evalkit.judges.offline import import_promptflow_quietly

                    import_promptflow_quietly()
                    from azure.ai.evaluation import ToolCallAccuracyEvaluator

                    self._tool_evaluator = ToolCallAccuracyEvaluator(
                        model_config=azure_model_config(self.model_config or {})
                    )
            # azure-ai-evaluation renders these into its prompt: no role line in them may start a message
            output = self._tool_evaluator(**neutralise_role_markers(inputs))
            return {
                "score": output.get("tool_call_accuracy"),
                "reason": output.get("tool_call_accuracy_reason", ""),
            }

        return run

    def _inputs(self, row: dict) -> dict:
        if self.name == "ToolCallAccuracy":
            calls, definitions = tool_calls_and_definitions(row.get("spans") or [])
            return {"query": row["prompt"], "tool_calls": calls, "tool_definitions": definitions}
        if self.name == "Similarity":
            return {
                "query": row["prompt"],
                "response": row["response"],
                "ground_truth": row["expected_response"],
            }
        if self.name == "Groundedness":
            return {"query": row["prompt"], "response": row["response"], "context": grounding(row)}
        return {"query": row["prompt"], "response": row["response"]}

    def cache_inputs(self, row, config):
        return self._inputs(row)

    def read(self, value):
        """An integer score from 1 to 5 (``strict_answers.integer_score``: not ``3.5``, ``true`` or ``"4"``)."""
        score = value.get("score")
        number = integer_score(score)
        if number is None:
            raise not_a_score(score)
        return float(number), str(value.get("reason") or "")


def _needs_tool_calls() -> dict:
    raise JudgeFailure(
        "ToolCallAccuracy needs the agent's tool calls, and this item has none: they come from the spans the "
        "agent emits, so run the document with an agent (evalkit run DOC --agent TARGET)",
        "evaluatorConfigurationError",
    )


def tool_calls_and_definitions(spans: list[dict]) -> tuple[list[dict], list[dict]]:
    """azure-ai-evaluation's ``tool_calls`` and ``tool_definitions`` from captured tool spans.

    A call is ``{"type": "tool_call", "tool_call_id", "name", "arguments"}`` (arguments from
    ``gen_ai.tool.call.arguments``, parsed when JSON); a definition is the tool's name, its
    ``gen_ai.tool.description`` and an open parameters object (spans do not carry the schema).
    """

    calls, definitions = [], {}
    for span in spans:
        attributes = span.get("attributes") or {}
        name = attributes.get("gen_ai.tool.name")
        if not name and str(span.get("name", "")).startswith("execute_tool "):
            name = span["name"][len("execute_tool ") :]
        if not name:
            continue
        arguments = attributes.get("gen_ai.tool.call.arguments", {})
        if isinstance(arguments, str):
            try:
                arguments = parse_json_text(arguments)
            except JsonInputError:
                arguments = {"input": arguments}
        calls.append(
            {
                "type": "tool_call",
                # Not the span id: it changes every run, and the call is part of the judge's cache key.
                "tool_call_id": str(attributes.get("gen_ai.tool.call.id") or f"call_{len(calls) + 1}"),
                "name": name,
                "arguments": arguments if isinstance(arguments, dict) else {"input": arguments},
            }
        )
        definitions.setdefault(
            name,
            {
                "name": name,
                "description": str(attributes.get("gen_ai.tool.description") or ""),
                "parameters": {"type": "object", "properties": {}},
            },
        )
    return calls, list(definitions.values())


def azure_model_config(config: dict) -> dict:
    """evalkit's judge configuration as azure-ai-evaluation's model configuration dict."""
    if "azure_endpoint" in config:
        keys = ("azure_endpoint", "azure_deployment", "api_version", "api_key")
        return {"type": "azure_openai", **{k: config[k] for k in keys if config.get(k)}}
    return {
        "type": "openai",
        "base_url": config["base_url"],
        "model": config["model"],
        "api_key": config.get("api_key", ""),
    }


def _judge_answer(reply) -> dict:
    """``{"score", "reason", "_tokens"}`` from a chat completion whose content is the judge's JSON object."""
    content = reply.choices[0].message.content if reply.choices else None
    answer = json_answer(content)
    if not isinstance(answer, dict):
        raise JudgeFailure(f"could not parse score: the judge answered {answer!r}", "judgeOutputUnparseable")
    if answer.get("status") == "skipped":
        raise JudgeFailure(
            f"the judge skipped this row: {answer.get('reason', '')}", "judgeOutputUnparseable"
        )
    usage = reply.usage
    return {
        "score": answer.get("score"),
        "reason": answer.get("reason") or answer.get("explanation") or "",
        "_tokens": {
            "prompt": getattr(usage, "prompt_tokens", 0) or 0,
            "completion": getattr(usage, "completion_tokens", 0) or 0,
        },
    }


def grounding(row: dict) -> str:
    """What Groundedness grounds on: ``context``, else the retrieval extracts, else ``expected_response``."""
    if row.get("context", "").strip():
        return row["context"]
    extracts = [
        extract.get("text", "")
        for execution in row.get("retrieval_executions") or []
        for hit in (execution.get("retrievalHits") or [])
        for extract in (hit.get("extracts") or [])
        if isinstance(extract, dict) and extract.get("text")
    ]
    if extracts:
        return "\n\n".join(extracts)
    return row.get("expected_response", "")


def _model_identity(config: dict) -> dict:
    """The model part of a cache key: where and what, never the key (the cache drops secrets too), nor the
    credentials in a URL's user part, so rotating them keeps the cache as rotating a key does."""
    return {k: redact_url(v) for k, v in config.items() if "key" not in k.lower()}


def _records(rows) -> list[dict]:
    columns = [
        c
        for c in (
            "prompt",
            "response",
            "expected_response",
            "context",
            "retrieval_executions",
            "spans",
            "extensions",
        )
        if c in rows
    ]
    values = [rows[c].tolist() for c in columns]
    return [dict(zip(columns, row)) for row in zip(*values)]


def builtin_judge(name: str) -> BuiltinJudge:
    return BuiltinJudge(name)
