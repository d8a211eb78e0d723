#!/usr/bin/env bash
# Create .venv and install evalkit with its test tools and the Spark extra (versions from constraints.txt); does nothing when
# pyproject.toml and constraints.txt are unchanged.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON="${PYTHON:-python3}"
if [ ! -x .venv/bin/python ]; then
  "$PYTHON" -m venv .venv
fi
stamp=.venv/.evalkit-installed
want=$(cat pyproject.toml constraints.txt | sha256sum | cut -d' ' -f1)
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
  .venv/bin/python -m pip install --quiet --upgrade pip
  # constraints.txt pins the set the tests ran with: an unpinned resolve once paired promptflow 1.18.1 with
  # an OpenTelemetry release it cannot import.
  # the spark extra too: the Spark engine's tests run in the normal suite (they need Java 17 as well)
  .venv/bin/python -m pip install --quiet -c constraints.txt -e ".[dev,spark]"
  echo "$want" > "$stamp"
fi
