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
# the wheels the Lambda packaging test bundles (spans package --requirements), for this machine's Python and
# architecture, so that the test builds its zip with PIP_NO_INDEX=1 from .venv/wheelhouse, without the network
lambda_requirements=tests/spans/data/sdk_evaluators/final_answer/requirements.txt
want=$(cat pyproject.toml constraints.txt "$lambda_requirements" | sha256sum | cut -d' ' -f1)
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
  .venv/bin/python -m pip install --quiet --upgrade pip
  # constraints.txt pins the set the tests ran with: an unpinned resolve once paired promptflow 1.18.1 with
  # an OpenTelemetry release it cannot import.
  # the spark extra too: the Spark engine's tests run in the normal suite (they need Java 17 as well)
  .venv/bin/python -m pip install --quiet -c constraints.txt -e ".[dev,spark]"
  python_version=$(.venv/bin/python -c 'import sys; print("%d.%d" % sys.version_info[:2])')
  arch=$(uname -m)
  glibc=$(.venv/bin/python -c 'import sys; print("2_34" if sys.version_info[:2] >= (3, 12) else "2_26")')
  .venv/bin/python -m pip download --quiet --dest .venv/wheelhouse --only-binary=:all: \
    --platform "manylinux2014_$arch" --platform "manylinux_${glibc}_$arch" --implementation cp \
    --python-version "$python_version" -r "$lambda_requirements"
  echo "$want" > "$stamp"
fi
