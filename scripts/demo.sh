#!/usr/bin/env bash
# The main job on the bundled data, offline and with no credentials: the recorded demo, then the demo agent.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
# 1. Recorded answers: every deterministic built-in and the code-only custom evaluators.
.venv/bin/evalkit run data/demo.json --out results/demo "$@"
echo
# 2. The bundled demo agent, asked live (offline, deterministic): answers, citations, retrieval and spans.
.venv/bin/evalkit run data/agent_demo.json --agent data/demo_agent/agent.py:answer --out results/agent-demo "$@"
echo
# 3. Recorded OpenTelemetry spans: AgentCore built-in LLM judges next to a code-based evaluator, the judge being
#    evalkit's local model server (offline, deterministic).
.venv/bin/python scripts/demo_span_judges.py results/agentcore-spans
echo
echo "evalkit and papermill are in .venv/bin: 'source .venv/bin/activate' puts them on your PATH for the README's" \
  "commands (or call .venv/bin/evalkit)."
