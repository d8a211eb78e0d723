#!/usr/bin/env bash
# Headless Chromium for the page tests (tests/reporting/browser/): Debian's `chromium` package, installed when
# the machine has none. playwright drives it through `executable_path`; it cannot download a browser of its own.
set -euo pipefail
source "$(dirname "$0")/apt_install.sh"
if command -v chromium >/dev/null 2>&1; then
  exit 0
fi
apt_install "the page tests drive headless Chromium (playwright cannot download a browser here)" chromium
