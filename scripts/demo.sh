#!/usr/bin/env bash
# The main job on the bundled data: evaluate data/demo.json offline, with no credentials.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
.venv/bin/evalkit run data/demo.json --out results/demo "$@"
