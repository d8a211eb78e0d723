"""Core benchmark: evalkit versus azure-ai-evaluation on 100,000 recorded items, import time, dispatch.

Prints numbers and ratios; it asserts nothing (targets live in the issue, not in timed unit tests): the
whole-process time and peak memory (ru_maxrss of each child process, its forked writers included) of
``evalkit run`` and of azure-ai-evaluation's ``evaluate()`` with one F1 evaluator, the per-file write times of
the run (from ``--log-level debug``), and the Python API's writers against serialising the same data with
``pandas.DataFrame.to_csv`` and orjson. The machine may be shared: ``--repeat N`` runs evalkit N times and
prints the range; compare ratios from the same sitting.

    .venv/bin/python benchmarks/bench_core.py            # 100,000 rows
    .venv/bin/python benchmarks/bench_core.py --rows 20000 --skip-azure --repeat 3
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

PYTHON = sys.executable
WORDS = (
    "policy leave vacation days salary benefits employee manager approval portal form travel expense "
    "report remote work office hours contract review payroll bonus insurance health dental vision plan"
).split()


def make_rows(n: int, seed: int = 7) -> list[dict]:
    rng = random.Random(seed)
    rows = []
    for i in range(n):
        expected = " ".join(rng.choice(WORDS) for _ in range(rng.randint(8, 20))) + "."
        words = expected.rstrip(".").split()
        if i % 3 == 0:
            response = expected
        else:
            rng.shuffle(words)
            response = " ".join(words[: max(1, len(words) - rng.randint(0, 6))]) + "."
        marker = ("", "[1]", "【1:0†doc】")[i % 3]
        rows.append(
            {
                "prompt": f"Question {i}: {words[0]}?",
                "expected_response": expected,
                "response": response + marker,
            }
        )
    return rows


def write_inputs(folder: Path, rows: list[dict]) -> tuple[Path, Path]:
    doc = {
        "schemaVersion": "1.11.0",
        "default_evaluators": {
            "ExactMatch": {},
            "PartialMatch": {},
            "Citations": {"citation_format": "mixed"},
        },
        "items": rows,
    }
    doc_path = folder / "bench.json"
    doc_path.write_text(json.dumps(doc))
    jsonl = folder / "bench.jsonl"
    with jsonl.open("w") as handle:
        for row in rows:
            handle.write(
                json.dumps({"response": row["response"], "ground_truth": row["expected_response"]}) + "\n"
            )
    return doc_path, jsonl


def run_measured(
    args: list[str], cwd: Path | None = None, env: dict | None = None, *, with_stderr: bool = False
) -> tuple:
    """Run a process; return (wall seconds, peak RSS MB, stdout), and its stderr with ``with_stderr``."""
    started = time.perf_counter()
    proc = subprocess.Popen(args, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - started
    out = proc.stdout.read()
    err = proc.stderr.read()
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"{' '.join(args)} failed:\n{err[-3000:]}")
    if with_stderr:
        return wall, usage.ru_maxrss / 1024, out, err
    return wall, usage.ru_maxrss / 1024, out


WROTE = re.compile(r"wrote (\S+) \(([\d,]+) rows, ([\d.]+) MB\) in ([\d.]+) s")


def write_times(stderr: str) -> dict[str, tuple[float, float]]:
    """File name -> (seconds, MB), from the debug lines of ``evalkit run --log-level debug``."""
    return {m[1]: (float(m[4]), float(m[3])) for m in WROTE.finditer(stderr)}


def import_time(statement: str = "import evalkit") -> float:
    code = f"import time; t = time.perf_counter(); {statement}; print(time.perf_counter() - t)"
    return min(float(subprocess.check_output([PYTHON, "-c", code], text=True)) for _ in range(5))


AZURE_INPROCESS = textwrap.dedent(
    """
    import sys, time, logging
    logging.disable(logging.WARNING)
    from azure.ai.evaluation import evaluate, F1ScoreEvaluator
    t = time.perf_counter()
    evaluate(data=sys.argv[1], evaluators={"f1": F1ScoreEvaluator()}, output_path=sys.argv[2])
    print(time.perf_counter() - t)
    """
)

EVALKIT_INPROCESS = textwrap.dedent(
    """
    import sys, time
    import evalkit
    df = evalkit.load(sys.argv[1])
    t = time.perf_counter()
    evalkit.evaluate(df, progress=False)
    print(time.perf_counter() - t)
    """
)

#: The Python API's writers against serialising the same data: pandas' to_csv for results.csv, orjson for
#: results.json and to_document (best of 3 each, CPU time of this process, so other load counts less).
WRITERS = textwrap.dedent(
    """
    import gc, io, sys, time
    gc.disable()
    import evalkit
    from evalkit.documents.results import results_metadata, write_document
    from evalkit.documents.write_back import document_root, iter_items
    from evalkit.reporting.csv_file import csv_frame, write_csv
    df = evalkit.evaluate(evalkit.load(sys.argv[1]), progress=False)
    out = sys.argv[2]
    def best(fn):
        times = []
        for _ in range(3):
            t = time.process_time(); fn(); times.append(time.process_time() - t)
        return min(times)
    def json_file():
        root = document_root(df)
        root["metadata"] = results_metadata(df, root.get("metadata") or {})
        root["items"] = iter_items(df, encoded=True)  # as save_results writes it
        with open(out + "/results.json", "w", encoding="utf-8") as handle:
            write_document(root, handle)
    frame = csv_frame(df)
    times = {
        "results.csv": best(lambda: write_csv(df, out + "/results.csv")),
        "to_csv": best(lambda: frame.to_csv(out + "/plain.csv", index=False, lineterminator="\\n")),
        "results.json": best(json_file),
        "to_document": best(lambda: evalkit.to_document(df)),
    }
    try:
        import orjson
        document = evalkit.to_document(df)
        times["orjson"] = best(lambda: open(out + "/plain.json", "wb").write(orjson.dumps(document)))
        times["to_document+orjson"] = best(lambda: orjson.dumps(evalkit.to_document(df)))
    except ImportError:
        pass
    print(" ".join(f"{k}={v:.3f}" for k, v in times.items()))
    """
)

#: Which library writes each file, and why (printed with the numbers; issue 20 asks for the choice).
WRITER_CHOICES = textwrap.dedent(
    """\
    Writers: results.json = plain rows (fully given by the table's columns) encoded column by column with
      json's own C functions into %b templates (documents/encoding/json_rows.py, json_scores.py: no per-item dicts);
      other items (threads, extra fields) orjson per item, spaced like json.dumps by one numpy pass per 2,000
      items, re-encoded by json where orjson's tokens differ, so the bytes are json's.
      results.csv = evalkit's own writer (documents/encoding/csv_text.py): numpy/str.join, no csv module; to_csv's bytes
      (Python's csv writer is most of to_csv's time). report.html = its page data by orjson (inline.py), its
      charts as plotly's JSON built directly (reporting/chart_specs.py: no figure validation).\
    """
)

DISPATCH = textwrap.dedent(
    """
    import sys, time
    import evalkit
    class Constant:
        def __call__(self, **_):
            return {"score": 1, "reason": "ok"}
    fn = Constant()
    n = int(sys.argv[1])
    doc = {"schemaVersion": "1.11.0", "default_evaluators": {}, "items": [
        {"prompt": f"p{i}", "response": f"r{i}", "expected_response": "e"} for i in range(n)]}
    df = evalkit.load(doc)
    best_run, best_own = 1e9, 1e9
    for _ in range(3):
        t = time.perf_counter(); evalkit.evaluate(df, evaluators={"constant": fn}, progress=False)
        best_run = min(best_run, time.perf_counter() - t)
        t = time.perf_counter()
        for i in range(n):
            fn(prompt="p", response="r", expected_response="e", context="")
        best_own = min(best_own, time.perf_counter() - t)
    print(best_run / n * 1e6, best_own / n * 1e6)
    """
)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--skip-azure", action="store_true", help="measure evalkit only")
    parser.add_argument("--repeat", type=int, default=1, help="evalkit runs to measure (prints the range)")
    args = parser.parse_args()

    print(f"import evalkit: {import_time():.3f} s (target < 0.3 s)")
    first_use = import_time("import evalkit; evalkit.load")
    print(f"import evalkit and first use of the API (pandas loads then): {first_use:.3f} s")
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        doc_path, jsonl = write_inputs(folder, make_rows(args.rows))
        (folder / "custom-evaluators").mkdir()

        ek_eval = float(run_measured([PYTHON, "-c", EVALKIT_INPROCESS, str(doc_path)], cwd=folder)[2])
        print(
            f"evalkit evaluate() on {args.rows} rows, ExactMatch + PartialMatch + Citations: {ek_eval:.3f} s"
        )
        walls, peaks, files = [], [], {}
        for _ in range(args.repeat):
            wall, rss, _, err = run_measured(
                [
                    PYTHON,
                    "-m",
                    "evalkit",
                    "run",
                    str(doc_path),
                    "--out",
                    str(folder / "out"),
                    "--log-level",
                    "debug",
                ],
                cwd=folder,
                with_stderr=True,
            )
            walls.append(wall)
            peaks.append(rss)
            for name, (seconds, mb) in write_times(err).items():
                files.setdefault(name, []).append((seconds, mb))
        ek_wall, ek_rss = min(walls), max(peaks)
        print(
            f"evalkit run (whole process, results.json + csv + html; CSV and HTML in forked writers): "
            f"{_range(walls)} s, peak {ek_rss:.0f} MB"
        )
        for name, runs in files.items():
            print(f"  wrote {name} ({runs[0][1]:.1f} MB) in {_range([s for s, _ in runs])} s")
        if "report.html" in files and files:
            share = min(s for s, _ in files["report.html"]) / ek_wall
            print(f"  report.html's write is {share:.0%} of the run's wall time")

        measured = dict(
            pair.split("=")
            for pair in run_measured([PYTHON, "-c", WRITERS, str(doc_path), str(folder)], cwd=folder)[
                2
            ].split()
        )
        measured = {k: float(v) for k, v in measured.items()}
        print(
            f"Python API writers (CPU s, best of 3): results.csv {measured['results.csv']:.2f} vs "
            f"DataFrame.to_csv {measured['to_csv']:.2f} ({measured['results.csv'] / measured['to_csv']:.2f}x); "
            f"results.json {measured['results.json']:.2f}, to_document {measured['to_document']:.2f}"
        )
        if "orjson" in measured:
            print(
                f"  vs orjson: results.json / orjson.dumps(document) {measured['results.json'] / measured['orjson']:.1f}x"
                f" ({measured['orjson']:.2f} s); results.json / (to_document + orjson) "
                f"{measured['results.json'] / measured['to_document+orjson']:.2f}x"
            )

        print(WRITER_CHOICES)

        if not args.skip_azure:
            from evalkit.judges.offline import QUIET_ENVIRONMENT

            env = {**os.environ, **QUIET_ENVIRONMENT}  # keep promptflow's telemetry off the network here too
            # promptflow's exporter leaves a Microsoft-AzureMonitor-* folder in the temporary folder: this one
            env["TMPDIR"] = str(folder)
            az_wall, az_rss, out = run_measured(
                [PYTHON, "-c", AZURE_INPROCESS, str(jsonl), str(folder / "azure.json")], cwd=folder, env=env
            )
            az_eval = float(out.strip().splitlines()[-1])
            print(f"azure-ai-evaluation evaluate() with F1ScoreEvaluator alone: {az_eval:.2f} s")
            print(f"azure-ai-evaluation whole process: {az_wall:.2f} s, peak {az_rss:.0f} MB")
            print(f"ratio evaluate(): {az_eval / ek_eval:.1f}x (target >= 20x)")
            print(
                f"ratio whole process: {az_wall / max(walls):.1f}-{az_wall / ek_wall:.1f}x (target >= 8x); "
                f"evalkit's peak memory is {ek_rss / az_rss:.2f} of azure's (target <= 0.33)"
            )

        per_row, own = (
            float(x) for x in run_measured([PYTHON, "-c", DISPATCH, "100000"], cwd=folder)[2].split()
        )
        print(
            f"code-only custom evaluator dispatch: {per_row:.2f} us/row in evaluate(), its own work {own:.2f} us/row, "
            f"overhead {per_row - own:.2f} us/row (target < 10 us)"
        )


def _range(values: list[float]) -> str:
    low, high = min(values), max(values)
    return f"{low:.2f}" if len(values) == 1 else f"{low:.2f}-{high:.2f}"


if __name__ == "__main__":
    main()
