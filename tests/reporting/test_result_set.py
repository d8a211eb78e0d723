"""results.json, results.csv, report.html (and spans.jsonl) are replaced as one set, also under kill -9."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import evalkit
from evalkit.documents.files.folder_swap import recover, staging_pattern
from evalkit.reporting.run_files import PARALLEL_ROWS

REPO = Path(__file__).resolve().parents[2]
ROWS = PARALLEL_ROWS  # large enough for the forked CSV/HTML writer


def _document(folder: Path, label: str, rows: int = ROWS) -> Path:
    items = [{"prompt": f"{label}-{i}", "response": "a", "expected_response": "a"} for i in range(rows)]
    path = folder / f"{label}.json"
    doc = {"schemaVersion": "1.11.0", "default_evaluators": {"ExactMatch": {}}, "items": items}
    path.write_text(json.dumps(doc))
    return path


def _run(document: Path, out: Path, *extra: str, kill_at: str | None = None, env=None, **popen):
    environment = {**os.environ, **(env or {})}
    if kill_at:
        environment["EVALKIT_TEST_KILL_AT"] = kill_at
    return subprocess.run(
        [sys.executable, "-m", "evalkit", "run", str(document), "--out", str(out), *extra],
        capture_output=True, text=True, timeout=300, env=environment, cwd=out.parent, **popen,
    )  # fmt: skip


def _label_of_set(out: Path, rows: int = ROWS, *, spans: bool = False) -> str:
    """The run whose complete set ``out`` holds; fails on a mix, a missing or truncated file, a temp file."""
    names = {"results.json", "results.csv", "report.html"} | ({"spans.jsonl"} if spans else set())
    assert {p.name for p in out.iterdir()} == names  # no temporary files, nothing missing
    items = json.loads((out / "results.json").read_text())["items"]
    assert len(items) == rows
    label = items[0]["prompt"].split("-")[0]
    assert all(item["prompt"].startswith(label + "-") for item in items)
    csv = (out / "results.csv").read_text().splitlines()
    assert len(csv) == rows + 1 and all(f",{label}-" in line for line in csv[1:])
    html = (out / "report.html").read_text()
    assert html.endswith("</html>\n") and f"{label}-{rows - 1}" in html
    return label


def _leftovers(out: Path) -> list[str]:
    pattern = staging_pattern(out.name)
    return [p.name for p in out.parent.iterdir() if pattern.match(p.name)]


def _writers_alive(out: Path) -> list[int]:
    """Processes (the run and its forked writer) whose command line names ``out``."""
    alive = []
    for proc in Path("/proc").iterdir():
        if proc.name.isdigit():
            try:
                status = (proc / "stat").read_text().rsplit(")", 1)[1].split()[0]
                if str(out) in (proc / "cmdline").read_bytes().decode(errors="replace") and status != "Z":
                    alive.append(int(proc.name))
            except OSError:
                continue
    return alive


@pytest.fixture(scope="module")
def docs(tmp_path_factory):
    folder = tmp_path_factory.mktemp("docs")
    return {label: _document(folder, label) for label in ("alpha", "beta", "gamma")}


@pytest.mark.skipif(not Path("/proc/self/cmdline").exists(), reason="needs /proc to find the forked writer")
@pytest.mark.parametrize(
    "point, expected, env",
    [
        ("forked", "alpha", {}),  # the forked CSV/HTML writer is busy: it must die with the run
        ("staged", "alpha", {}),  # every file written, not swapped yet
        ("swapped", "beta", {}),  # swapped, the old folder not removed yet
        ("swapped", "beta", {"EVALKIT_NO_RENAME_EXCHANGE": "1"}),  # the two-rename swap
    ],
)
def test_a_run_killed_at_any_point_leaves_one_complete_set(tmp_path, docs, point, expected, env):
    out = tmp_path / "out"
    assert _run(docs["alpha"], out).returncode == 0
    killed = _run(docs["beta"], out, kill_at=point, env=env)
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    deadline = time.monotonic() + 10
    while _writers_alive(out) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _writers_alive(out) == []
    if point == "forked":  # the forked writer died with its parent rather than finishing its files
        assert not [p for name in _leftovers(out) for p in (out.parent / name).glob("report.html")]
    assert _label_of_set(out) == expected
    assert _leftovers(out)  # the killed run's staging (or old) folder is still there ...
    assert _run(docs["gamma"], out, env=env).returncode == 0
    assert _label_of_set(out) == "gamma"
    assert _leftovers(out) == []  # ... and the next run removed it


def test_two_rename_swap_killed_between_the_renames_is_recovered_by_the_next_run(tmp_path, docs):
    out = tmp_path / "out"
    assert _run(docs["alpha"], out).returncode == 0
    env = {"EVALKIT_NO_RENAME_EXCHANGE": "1"}
    killed = _run(docs["beta"], out, kill_at="moved-aside", env=env)
    assert killed.returncode == -signal.SIGKILL
    assert not out.exists()  # the one window of the fallback: the next start puts the old folder back
    recover(out)
    assert _label_of_set(out) == "alpha"
    assert _leftovers(out) == []


@pytest.mark.parametrize("share", [0.55, 0.7, 0.8, 0.9, 0.97])
def test_a_run_killed_at_a_random_moment_leaves_one_complete_set(tmp_path, docs, share):
    """Kill a real run at a share of the time a whole run takes (most of it is loading and scoring)."""
    out = tmp_path / "out"
    started = time.monotonic()
    assert _run(docs["alpha"], out).returncode == 0
    delay = (time.monotonic() - started) * share
    proc = subprocess.Popen(
        [sys.executable, "-m", "evalkit", "run", str(docs["beta"]), "--out", str(out)],
        cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    time.sleep(delay)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    deadline = time.monotonic() + 10
    while _writers_alive(out) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _label_of_set(out) in ("alpha", "beta")
    assert _run(docs["gamma"], out).returncode == 0
    assert _label_of_set(out) == "gamma" and _leftovers(out) == []


def test_other_files_in_the_folder_are_kept_and_a_stale_spans_file_goes(tmp_path):
    scored = evalkit.evaluate(evalkit.load(_document(tmp_path, "alpha", rows=3)), progress=False)
    out = tmp_path / "out"
    paths = evalkit.save_results(scored, out, extra={"spans.jsonl": lambda p: p.write_text("{}\n")})
    assert paths["spans.jsonl"] == out / "spans.jsonl" and paths["spans.jsonl"].read_text() == "{}\n"
    (out / "notes.txt").write_text("mine")
    (out / "notebook").mkdir()
    (out / "notebook" / "report.html").write_text("rendered")
    evalkit.save_results(scored, out)
    assert sorted(p.name for p in out.iterdir()) == [
        "notebook", "notes.txt", "report.html", "results.csv", "results.json"
    ]  # fmt: skip
    assert (out / "notes.txt").read_text() == "mine"
    assert (out / "notebook" / "report.html").read_text() == "rendered"
    assert _leftovers(out) == []


def test_a_failed_write_leaves_the_old_set_and_no_staging_folder(tmp_path, monkeypatch):
    scored = evalkit.evaluate(evalkit.load(_document(tmp_path, "alpha", rows=3)), progress=False)
    out = tmp_path / "out"
    evalkit.save_results(scored, out)
    before = {p.name: p.read_bytes() for p in out.iterdir()}

    def broken(target):
        raise OSError(28, "No space left on device")

    with pytest.raises(OSError):
        evalkit.save_results(scored, out, extra={"spans.jsonl": broken})
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before
    assert _leftovers(out) == []


def test_saving_into_the_current_directory_keeps_the_process_there(tmp_path, monkeypatch):
    scored = evalkit.evaluate(evalkit.load(_document(tmp_path, "alpha", rows=3)), progress=False)
    out = tmp_path / "out"
    (out / "sub").mkdir(parents=True)
    monkeypatch.chdir(out / "sub")
    evalkit.save_results(scored, out)
    assert Path.cwd() == out / "sub" and Path("../results.json").is_file()
    evalkit.save_results(scored, ".")
    assert Path("results.json").is_file() and Path.cwd() == out / "sub"


def test_spans_jsonl_is_replaced_with_the_set(tmp_path):
    out = tmp_path / "out"
    agent = ["--agent", str(REPO / "data/demo_agent/agent.py") + ":answer"]
    common = ["--custom-dir", str(REPO / "custom-evaluators")]
    document = REPO / "data/agent_demo.json"
    first = _run(document, out, *agent, *common)
    assert first.returncode == 0, first.stderr
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    assert set(before) == {"results.json", "results.csv", "report.html", "spans.jsonl"}
    assert before["spans.jsonl"]
    killed = _run(document, out, *agent, *common, kill_at="staged")
    assert killed.returncode == -signal.SIGKILL
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before
    without_agent = _run(document, out, *common)
    assert without_agent.returncode == 0, without_agent.stderr
    assert sorted(p.name for p in out.iterdir()) == ["report.html", "results.csv", "results.json"]
    assert _leftovers(out) == []


def test_a_file_in_place_of_the_folder_is_an_error_and_is_left_alone(tmp_path):
    scored = evalkit.evaluate(evalkit.load(_document(tmp_path, "alpha", rows=3)), progress=False)
    out = tmp_path / "out"
    out.write_text("not a folder")
    with pytest.raises(NotADirectoryError, match="it is a file, not a folder"):
        evalkit.save_results(scored, out)
    assert out.read_text() == "not a folder" and _leftovers(out) == []


def test_cli_names_a_file_in_place_of_the_folder(tmp_path):
    (tmp_path / "out").write_text("not a folder")
    proc = _run(_document(tmp_path, "alpha", rows=3), tmp_path / "out")
    assert proc.returncode == 2 and proc.stderr.startswith("Error: cannot write results to")
    assert "it is a file, not a folder" in proc.stderr


def test_a_mount_point_has_its_files_replaced_one_by_one(tmp_path, monkeypatch, caplog):
    from evalkit.documents.files import folder_swap

    scored = evalkit.evaluate(evalkit.load(_document(tmp_path, "alpha", rows=3)), progress=False)
    out = tmp_path / "out"
    evalkit.save_results(scored, out, extra={"spans.jsonl": lambda p: p.write_text("{}\n")})
    (out / "notes.txt").write_text("mine")
    (out / ".evalkit-staging-999999999-dead").mkdir()  # left by a killed run (no such pid)
    inode = out.stat().st_ino
    monkeypatch.setattr(folder_swap, "_is_mount_point", lambda target: target == out)
    evalkit.save_results(scored, out)
    assert out.stat().st_ino == inode  # the folder itself stayed
    assert sorted(p.name for p in out.iterdir()) == [
        "notes.txt",
        "report.html",
        "results.csv",
        "results.json",
    ]
    assert "mount point" in caplog.text
