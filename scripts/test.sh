#!/usr/bin/env bash
# The test command: lint and format check with ruff, then the whole pytest suite (offline; the page tests
# drive headless Chromium, which scripts/browser.sh installs when it is missing).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
bash scripts/browser.sh
.venv/bin/ruff check .
.venv/bin/ruff format --check .
.venv/bin/python -m pytest "$@"
