#!/usr/bin/env bash
# Create .venv and install evalkit with its test tools and the Spark extra (versions from constraints.txt); does nothing when
# pyproject.toml and constraints.txt are unchanged. The first time takes several minutes (about 200 packages, some
# large: pyspark, promptflow, azure-ai-evaluation): each step prints a line with the time since the start, and pip's
# progress is summed up every 25 packages.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/progress.sh
PYTHON="${PYTHON:-python3}"
if [ ! -x .venv/bin/python ]; then
  step "creating .venv with $PYTHON"
  "$PYTHON" -m venv .venv
fi
stamp=.venv/.evalkit-installed
# the wheels the Lambda packaging test bundles (spans package --requirements), for this machine's Python and
# architecture, so that the test builds its zip with PIP_NO_INDEX=1 from .venv/wheelhouse, without the network
lambda_requirements=tests/spans/data/sdk_evaluators/final_answer/requirements.txt
want=$(cat pyproject.toml constraints.txt "$lambda_requirements" | sha256sum | cut -d' ' -f1)
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
  step "upgrading pip"
  .venv/bin/python -m pip install --quiet --upgrade pip
  # constraints.txt pins the set the tests ran with: an unpinned resolve once paired promptflow 1.18.1 with
  # an OpenTelemetry release it cannot import.
  # the spark extra too: the Spark engine's tests run in the normal suite (they need Java 17 as well)
  step "installing evalkit, its test tools and the Spark extra (the first time: about 5 minutes)"
  .venv/bin/python -m pip install --progress-bar off -c constraints.txt -e ".[dev,spark]" | pip_progress
  python_version=$(.venv/bin/python -c 'import sys; print("%d.%d" % sys.version_info[:2])')
  arch=$(uname -m)
  glibc=$(.venv/bin/python -c 'import sys; print("2_34" if sys.version_info[:2] >= (3, 12) else "2_26")')
  step "downloading the wheels of the Lambda packaging test into .venv/wheelhouse"
  .venv/bin/python -m pip download --quiet --dest .venv/wheelhouse --only-binary=:all: \
    --platform "manylinux2014_$arch" --platform "manylinux_${glibc}_$arch" --implementation cp \
    --python-version "$python_version" -r "$lambda_requirements"
  echo "$want" > "$stamp"
  step "set up (.venv is ready; 'source .venv/bin/activate' puts evalkit and papermill on your PATH)"
fi
