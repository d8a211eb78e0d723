#!/usr/bin/env bash
# Regenerate the README's screenshots (docs/screenshots/*.png) with the page tests' own browser: the tests that
# take them run with EVALKIT_SCREENSHOTS=1, which points their SCREENSHOTS folder at docs/screenshots (an
# ordinary test run writes them to a scratch folder). Run from anywhere; needs chromium (scripts/browser.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON="${PYTHON:-.venv/bin/python}"
EVALKIT_SCREENSHOTS=1 PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}" "$PYTHON" -m pytest -q -p no:cacheprovider \
  "tests/reporting/browser/test_run_page.py::test_prompt_and_response_of_a_row_are_readable_at_1280" \
  "tests/reporting/browser/test_run_page.py::test_item_view_shows_the_whole_item_and_its_trace" \
  "tests/reporting/browser/test_compare_page.py::test_comparison_page_warns_colours_nothing_unsupported_and_diffs_words" \
  "tests/reporting/browser/test_flaky_marks.py::test_flaky_items_are_marked_with_their_pass_share" \
  "tests/reporting/browser/test_flaky_marks.py::test_the_item_view_shows_every_judgment" \
  "tests/reporting/browser/test_pairwise_page.py"
ls -l docs/screenshots/*.png
