#!/usr/bin/env bash
# Headless Chromium for the page tests (tests/reporting/browser/): Debian's `chromium` package, installed when
# the machine has none. playwright drives it through `executable_path`; it cannot download a browser of its own.
set -euo pipefail
if command -v chromium >/dev/null 2>&1; then
  exit 0
fi
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  echo "Installing chromium (apt-get) for the browser tests..."
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
else
  echo "chromium is missing: install it with 'sudo apt-get install -y chromium' (the browser tests need it)" >&2
  exit 3
fi
