"""The fast tier (``pytest -m "not slow"``) leaves out what needs a browser, Spark or a notebook kernel.

tests/conftest.py marks those tests by fixture, folder and file when they are collected; these tests run that
hook on stand-in items and, in a whole-suite run, check the marks of every collected test.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests import conftest

TESTS = Path(__file__).resolve().parent


class Item:
    """What the hook reads of a collected test: its file, its fixtures; and where it puts marks."""

    def __init__(self, relative: str, fixtures: tuple[str, ...] = (), name: str = "test_x"):
        self.path = TESTS / relative
        self.name = self.originalname = name
        self.fixturenames = list(fixtures)
        self.marks: list[str] = []

    def add_marker(self, mark) -> None:
        self.marks.append(mark.name if mark.name != "xdist_group" else f"xdist_group:{mark.args[0]}")


@pytest.mark.parametrize(
    ("relative", "fixtures", "marks"),
    [
        ("reporting/browser/test_run_page.py", ("open_page",), ["slow"]),
        ("reporting/test_reports.py", ("browser",), ["slow"]),
        ("spark/test_spark_run.py", ("spark",), ["slow", "xdist_group:spark"]),
        ("spans/test_spans.py", ("spark",), ["slow", "xdist_group:spark"]),
        ("notebook/test_notebooks.py", (), ["slow"]),
        ("docs/test_ci_recipe.py", (), ["slow"]),
        ("documents/test_documents.py", ("tmp_path",), []),
        ("spans/test_spans.py", (), []),
        ("reporting/test_result_set.py::test_spans_jsonl_is_replaced_with_the_set", (), ["slow"]),
        ("cli/test_run.py::test_demo_run_completes_and_writes_three_files", (), ["slow"]),
        ("cli/test_run.py::test_fail_under_parses_a_percentage", (), []),
    ],
)
def test_the_hook_marks_by_folder_file_and_fixture(relative, fixtures, marks):
    relative, _, name = relative.partition("::")
    item = Item(relative, fixtures, name or "test_x")
    conftest.pytest_collection_modifyitems(None, [item])
    assert item.marks == marks


def test_every_collected_browser_spark_and_notebook_test_is_marked(request):
    unmarked = []
    for item in request.session.items:
        relative = Path(str(item.path)).resolve().relative_to(TESTS).as_posix()
        probe = Item(relative, item.fixturenames, getattr(item, "originalname", item.name))
        conftest.pytest_collection_modifyitems(None, [probe])
        if "slow" in probe.marks and item.get_closest_marker("slow") is None:
            unmarked.append(item.nodeid)
    assert unmarked == []
