"""Demo step: AgentCore built-in LLM judges and code-based evaluators over recorded spans, fully offline.

Starts evalkit's local model server (``evalkit.testing.ModelServer``, deterministic answers) as the judge
model, then runs ``evalkit spans eval`` exactly as a user would against a real endpoint (``OPENAI_BASE_URL`` /
``OPENAI_API_KEY`` / ``OPENAI_MODEL``), twice:

* ``data/agentcore_spans.jsonl``: spans of four instrumentations (GenAI conventions, Strands, Traceloop,
  OpenInference), the conversation in span attributes and span events;
* ``data/agentcore_split_spans.jsonl``: AgentCore's split form (spans plus the event records that carry the
  conversation, made by AWS's SDK), with ground truth from ``data/agentcore_split_references.json``: the four
  reference Lambdas, ``Builtin.Helpfulness``, ``Builtin.GoalSuccessRate`` (judged against the assertions) and
  ``Builtin.TrajectoryInOrderMatch``.

The judge cache goes to a temporary folder so the demo always shows the model calls.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile

from evalkit.testing import ModelServer

EVALUATORS = ("Builtin.Helpfulness", "Builtin.GoalSuccessRate", "Builtin.ToolSelectionAccuracy", "pii_leak")
SPLIT_EVALUATORS = (
    "Builtin.Helpfulness",
    "Builtin.GoalSuccessRate",
    "Builtin.TrajectoryInOrderMatch",
    "tool_response_schema",
    "stock_price_drift",
    "workflow_contract",
    "pii_leak",
)


def main() -> int:
    out = sys.argv[1] if len(sys.argv) > 1 else "results/agentcore-spans"
    first = spans_eval("data/agentcore_spans.jsonl", out, EVALUATORS)
    print()
    split = spans_eval(
        "data/agentcore_split_spans.jsonl",
        out + "-split",
        SPLIT_EVALUATORS,
        "--reference-inputs",
        "data/agentcore_split_references.json",
    )
    return first or split


def spans_eval(spans: str, out: str, evaluators, *extra: str) -> int:
    """``evalkit spans eval SPANS --out OUT --evaluator ...`` with the local model server as the judge."""
    with ModelServer() as server, tempfile.TemporaryDirectory() as cache:
        env = dict(
            os.environ,
            OPENAI_BASE_URL=server.openai_base_url,
            OPENAI_API_KEY="demo",
            OPENAI_MODEL="evalkit-model-server",
            EVALKIT_CACHE_DIR=cache,
        )
        command = [
            sys.executable,
            "-m",
            "evalkit",
            "spans",
            "eval",
            spans,
            "--out",
            out,
            *extra,
        ]
        for name in evaluators:
            command += ["--evaluator", name]
        print("$ evalkit " + " ".join(command[3:]))
        return subprocess.call(command, env=env)


if __name__ == "__main__":
    sys.exit(main())
