"""Demo step: AgentCore built-in LLM judges and a code-based evaluator over recorded spans, fully offline.

Starts evalkit's local model server (``evalkit.testing.ModelServer``, deterministic answers) as the judge
model, then runs ``evalkit spans eval`` on ``data/agentcore_spans.jsonl`` exactly as a user would against a
real endpoint (``OPENAI_BASE_URL`` / ``OPENAI_API_KEY`` / ``OPENAI_MODEL``). The judge cache goes to a
temporary folder so the demo always shows the model calls.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile

from evalkit.testing import ModelServer

EVALUATORS = ("Builtin.Helpfulness", "Builtin.GoalSuccessRate", "Builtin.ToolSelectionAccuracy", "pii_leak")


def main() -> int:
    out = sys.argv[1] if len(sys.argv) > 1 else "results/agentcore-spans"
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
            "data/agentcore_spans.jsonl",
            "--out",
            out,
        ]
        for name in EVALUATORS:
            command += ["--evaluator", name]
        print("$ evalkit " + " ".join(command[3:]))
        return subprocess.call(command, env=env)


if __name__ == "__main__":
    sys.exit(main())
