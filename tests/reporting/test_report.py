"""Tests of the run report: the pieces in evalkit.reporting.notebook_report, its HTML export, and ``evalkit report`` end to end.

The end-to-end tests execute the report notebook on a real ``python3`` kernel through the command's ``main``
(about two seconds each), so the demo reports are rendered once per module and inspected by several tests.
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import html
import json
import re
import time
from html.parser import HTMLParser
from pathlib import Path

import nbformat
import numpy as np
import pytest

import evalkit
from evalkit.analysis.comparison import compare
from evalkit.cli import report as report_command
from evalkit.documents.run_reader import read_run
from evalkit.errors import DocumentError, EnvironmentConfigError
from evalkit.reporting import notebook_report as report
from evalkit.reporting.notebook_report.run_facts import _without_url_secrets

REPO = Path(__file__).resolve().parents[2]
XSS = "<script>alert(1)</script>"
XSS_TITLE = "<img src=x onerror=alert(3)>"
SECRET = "sk-SECRET-XYZ"
WORDS = np.array("policy leave salary days employees form benefits office remote travel".split())


# ------------------------------------------------------------------------------------------------ helpers


def run_command(*argv: str) -> int:
    """``evalkit report ARGV`` through the command module's own parser and ``main`` (as cli.py will wire it)."""
    parser = argparse.ArgumentParser(prog="evalkit")
    report_command.register(parser.add_subparsers(dest="command"))
    args = parser.parse_args(["report", *argv])
    return args.func(args)


def save_run(document: dict, folder: Path) -> Path:
    """Evaluate ``document`` (with the demo's custom evaluators) and save it as a run folder."""
    source = folder.parent / f"{folder.name}.json"
    source.write_text(json.dumps(document), encoding="utf-8")
    scored = evalkit.evaluate(evalkit.load(source), custom_dir=REPO / "custom-evaluators", progress=False)
    evalkit.save_results(scored, folder)
    return folder


def synthetic_turn(rng: np.random.Generator, label: str) -> dict:
    """A recorded turn: 30 % exact answers, 40 % partial ones, 30 % wrong."""
    expected = " ".join(rng.choice(WORDS, 12))
    draw = rng.random()
    response = expected if draw < 0.3 else (" ".join(expected.split()[:8]) if draw < 0.7 else "no idea")
    prompt = f"{label} " + " ".join(rng.choice(WORDS, 15))
    return {"prompt": prompt, "expected_response": expected, "response": response}


def synthetic_run(n: int, folder: Path) -> Path:
    """``n`` recorded items scored by ExactMatch and PartialMatch; every 10th item is a 3-turn thread."""
    rng = np.random.default_rng(0)
    items = [
        {"conversation_id": f"t{i}", "turns": [synthetic_turn(rng, f"Q{i}.{k}") for k in range(3)]}
        if i % 10 == 9
        else synthetic_turn(rng, f"Q{i}")
        for i in range(n)
    ]
    document = {
        "schemaVersion": "1.11.0",
        "metadata": {"name": f"synthetic {n}"},
        "default_evaluators": {"ExactMatch": {}, "PartialMatch": {}},
        "items": items,
    }
    return save_run(document, folder)


class Tags(HTMLParser):
    """Every start tag with its attributes, and the text of every ``<script>`` element (parsed as a browser does)."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict]] = []
        self.scripts: list[tuple[dict, str]] = []
        self._script: dict | None = None

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))
        if tag == "script":
            self._script = dict(attrs)
            self.scripts.append((self._script, ""))

    def handle_data(self, data):
        if self._script is not None:
            attrs, text = self.scripts[-1]
            self.scripts[-1] = (attrs, text + data)

    def handle_endtag(self, tag):
        if tag == "script":
            self._script = None


def parse(page: str) -> Tags:
    parser = Tags()
    parser.feed(page)
    parser.close()
    return parser


def figures_in(page: str) -> int:
    return len(re.findall(r"<div class='evalkit-figure' id='evalkit-figure-\d+'></div>", page))


# ------------------------------------------------------------------------------------------------ fixtures


@pytest.fixture(scope="module")
def demo_runs(tmp_path_factory):
    """Run A: the bundled demo. Run B: the demo with a hostile, now failing response and a hostile name."""
    root = tmp_path_factory.mktemp("report-runs")
    document = json.loads((REPO / "data" / "demo.json").read_text(encoding="utf-8"))
    a = save_run(document, root / "baseline")
    document["items"][0]["response"] = f"{XSS} New employees get 15 days."
    document["metadata"]["name"] = "Demo & <b>friends</b>"
    b = save_run(document, root / "candidate")
    return a, b


@pytest.fixture(scope="module")
def rendered(demo_runs, tmp_path_factory):
    """The demo reports, rendered once through the command: B alone, and B against baseline A."""
    a, b = demo_runs
    out = tmp_path_factory.mktemp("reports")
    timings = {}
    for name, extra in (("alone", []), ("compared", ["--baseline", str(a)])):
        started = time.perf_counter()
        assert run_command(str(b), *extra, "--out", str(out / f"{name}.html")) == 0
        timings[name] = time.perf_counter() - started
    return {name: (out / f"{name}.html").read_text(encoding="utf-8") for name in timings}


# ------------------------------------------------------------------------------------------------ the command


def test_report_without_baseline(rendered, demo_runs):
    page = rendered["alone"]
    for heading in ("Provenance", "Summary", "Charts", "Failing rows", "Comparison with the baseline"):
        assert f"<h2>{heading}</h2>" in page
    assert "<title>Demo &amp; &lt;b&gt;friends&lt;/b&gt;</title>" in page  # the document's name, escaped
    # pass rates, status breakdown, score distributions, thread turns (the demo has one thread)
    assert figures_in(page) == 4
    assert "No baseline given" in page
    failing = int((read_run(demo_runs[1])["status"] != "pass").sum())
    assert f"{failing:,} rows did not pass" in page
    assert 'id="regressed"' not in page
    # outputs only: no code from the notebook
    assert "read_run(run_dir)" not in page and "report.configure_plotly" not in page


def test_report_with_baseline(rendered, demo_runs):
    page = rendered["compared"]
    c = compare(*demo_runs)
    assert len(c.regressed) >= 1  # the hostile response made item 0 fail
    assert f'<h3 id="regressed">Regressed ({len(c.regressed):,})</h3>' in page
    assert f'<h3 id="improved">Improved ({len(c.improved):,})</h3>' in page
    assert "McNemar&#39;s exact test" in page  # says which test decides
    # baseline and candidate come from different documents (the candidate's was edited): said, not hidden
    assert '<div class="banner warning" role="alert"><strong>Different documents.</strong>' in page
    assert '<div class="diff">' in page  # the responses of changed rows, as a word diff
    assert "A (baseline) = baseline · B (this run) = candidate" in page
    assert figures_in(page) == 6  # the four of the run, plus pass-rate and mean deltas
    assert "No baseline given" not in page


def test_report_opens_offline(rendered):
    """No remote reference anywhere; plotly.js inline once; the CSP admits exactly the page's own scripts."""
    from plotly.offline import get_plotlyjs

    signature = get_plotlyjs()[:200]
    for page in rendered.values():
        parsed = parse(page)
        for tag, attrs in parsed.tags:
            assert tag not in ("link", "iframe", "object", "embed", "base"), tag
            for name in ("src", "href", "action", "data"):
                value = (attrs.get(name) or "").strip().lower()
                assert not value.startswith(("http:", "https:", "//", "ftp:")), (tag, attrs)
        assert "@import" not in page
        assert page.count(signature) == 1
        executable = [text for attrs, text in parsed.scripts if attrs.get("type") != "application/json"]
        assert not any(attrs.get("src") for attrs, _ in parsed.scripts)
        # the page's table, its loader of the whole data and item view, plotly prelude, plotly.js, charts
        assert len(executable) == 6
        csp = html.unescape(
            re.search(r'http-equiv="Content-Security-Policy" content="([^"]+)"', page).group(1)
        )
        assert "default-src 'none'" in csp
        allowed = set(re.findall(r"'sha256-[A-Za-z0-9+/=]+'", csp))
        hashes = {
            "'sha256-" + base64.b64encode(hashlib.sha256(s.encode()).digest()).decode() + "'"
            for s in executable
        }
        assert hashes == allowed


def test_report_escapes_hostile_strings(rendered, demo_runs, tmp_path):
    for page in rendered.values():
        assert XSS not in page
        assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page  # shown, as text, in the failing rows
        assert "<b>friends</b>" not in page
    # The hostile response is in the failing rows and (compared) in the regressed rows; nothing added a tag:
    # every <script> element is one of the page's six scripts, the first rows, the item data or a figure's JSON.
    for page in rendered.values():
        parsed = parse(page)
        assert len(parsed.scripts) == 6 + 2 + figures_in(page)
        assert not [t for t, _ in parsed.tags if t == "img"]

    out = tmp_path / "titled.html"
    assert run_command(str(demo_runs[1]), "--title", XSS_TITLE, "--out", str(out)) == 0
    page = out.read_text(encoding="utf-8")
    assert XSS_TITLE not in page
    assert "<h1>&lt;img src=x onerror=alert(3)&gt;</h1>" in page
    assert "<title>&lt;img src=x onerror=alert(3)&gt;</title>" in page


def test_report_shows_no_key(demo_runs, tmp_path, monkeypatch):
    """A key in the environment, and planted in results.json where no report field is read from, shows nowhere."""
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    run = tmp_path / "judged"
    run.mkdir()
    document = json.loads((demo_runs[0] / "results.json").read_text(encoding="utf-8"))
    document["metadata"]["extensions"] = {
        "dev.evalkit.run": {"evalkit_version": "0.1.0", "api_key": SECRET},
        "dev.evalkit.judge": {
            "model": f"OpenAI-compatible https://user:{SECRET}@judge.example/v1?api-key={SECRET} model gpt-x",
            "parameters": {
                "temperature": 0,
                "seed": 7,
                "api_key": SECRET,
                "headers": {"Authorization": SECRET},
            },
            "prompt_hashes": {"Relevance": "ab" * 32, "Leaky": SECRET},
            "calls": 30,
            "cache_hits": 10,
            "throttled": 0,
            "api_key": SECRET,
            "tokens": {},
            "prompt_tokens": 1200,
            "completion_tokens": 80,
        },
    }
    (run / "results.json").write_text(json.dumps(document), encoding="utf-8")
    out, notebook = tmp_path / "report.html", tmp_path / "executed.ipynb"
    assert run_command(str(run), "--out", str(out), "--notebook", str(notebook)) == 0
    page, executed = out.read_text(encoding="utf-8"), notebook.read_text(encoding="utf-8")
    assert SECRET not in page
    assert SECRET not in executed
    # the named fields are there: the report did read the judge summary
    assert "OpenAI-compatible https://judge.example/v1 model gpt-x" in page
    assert "temperature=0, seed=7" in page
    assert "ab" * 32 in page
    assert "10 (25.0% of 40 judge requests)" in page
    assert "1,200 prompt + 80 completion = 1,280" in page
    assert nbformat.reads(executed, as_version=4).cells  # a real executed notebook was kept


def test_report_of_1000_items_is_small_and_quick(tmp_path):
    from plotly.offline import get_plotlyjs

    run = synthetic_run(1000, tmp_path / "run1000")
    out = tmp_path / "report.html"
    started = time.perf_counter()
    assert run_command(str(run), "--out", str(out)) == 0
    elapsed = time.perf_counter() - started
    size = out.stat().st_size
    assert elapsed < 30, f"{elapsed:.1f} s"
    assert size < 10_000_000
    # what the run adds besides plotly.js stays small: the failing rows are capped, figures are aggregates
    assert size - len(get_plotlyjs().encode()) < 1_000_000, size
    page = out.read_text(encoding="utf-8")
    assert "Thread turns (first 50 of 100 threads)" in page
    assert "the first 200 in run order" in page
    assert re.search(r"[\d,]+ more rows not shown", page)


def test_missing_run_fails_before_any_kernel(tmp_path):
    started = time.perf_counter()
    with pytest.raises(DocumentError, match="no such file or folder"):
        run_command(str(tmp_path / "nope"), "--out", str(tmp_path / "r.html"))
    with pytest.raises(DocumentError, match="no results.json"):
        run_command(str(tmp_path), "--out", str(tmp_path / "r.html"))
    assert time.perf_counter() - started < 2
    assert not (tmp_path / "r.html").exists()


def test_notebook_errors_name_the_problem(tmp_path):
    """An eval document that was never run fails inside the notebook (read_run) and keeps its exit code 2."""
    folder = tmp_path / "not-a-run"
    folder.mkdir()
    (folder / "results.json").write_text((REPO / "data" / "demo.json").read_text(encoding="utf-8"))
    with pytest.raises(DocumentError, match="not the results of a run"):
        report.render_report(folder, tmp_path / "r.html")
    assert not (tmp_path / "r.html").exists()


def test_missing_kernel_is_an_environment_error(demo_runs, tmp_path):
    with pytest.raises(EnvironmentConfigError, match="no Jupyter kernel named 'no-such-kernel'"):
        report.render_report(demo_runs[0], tmp_path / "r.html", kernel_name="no-such-kernel")


def test_packaged_notebook_is_the_repository_notebook():
    packaged, source = report.notebook_path(), REPO / "notebooks" / "report.ipynb"
    assert packaged.read_bytes() == source.read_bytes(), (
        "evalkit/templates/report.ipynb must be a copy of notebooks/report.ipynb: copy it over after editing"
    )
    tags = [c.metadata.get("tags", []) for c in nbformat.read(source, as_version=4).cells]
    assert ["parameters"] in tags


# ------------------------------------------------------------------------------------------------ the pieces


def test_failing_items_are_capped_and_counted(demo_runs):
    run = read_run(demo_runs[1])
    failing = int((run["status"] != "pass").sum())
    frame, total = report.failing_items(run, limit=2)
    assert total == failing > 2
    assert len(frame) == 2
    assert list(frame.columns) == list(report.FAILING_COLUMNS)
    assert frame.loc[0, "item"] == 0 and XSS in frame.loc[0, "response"]  # the frame keeps the real text
    assert "fail" in frame.loc[0, "failed"]
    page = report.failing_html(run, limit=2)
    assert f"{failing - 2:,} more rows not shown" in page
    assert XSS not in page and "&lt;script&gt;" in page


def test_provenance_reads_named_fields_only(demo_runs):
    run = read_run(demo_runs[0])
    run.attrs["evalkit"]["judge"] = {
        "model": "Azure OpenAI https://x.openai.azure.com/?sig=abc deployment d (api 2024-06-01)",
        "parameters": {"temperature": 0.0, "token": "nope", "max_tokens": 800},
        "prompt_hashes": {"Relevance": "0123456789abcdef", "Bad": "not a hash"},
        "cache_hits": 3,
        "calls": 0,
        "secret": "nope",
    }
    table = report.provenance(run).set_index("field")["value"]
    assert table["judge model"] == "Azure OpenAI https://x.openai.azure.com/ deployment d (api 2024-06-01)"
    assert table["judge parameters"] == "temperature=0, max_tokens=800"
    assert table["judge prompt sha256: Relevance"] == "0123456789abcdef"
    assert "judge prompt sha256: Bad" not in table.index
    assert table["judge cache hits"] == "3 (100.0% of 3 judge requests)"
    assert table["evalkit version (report)"] == evalkit.__version__
    assert len(table["results.json sha256"]) == 64
    assert "nope" not in " ".join(table.tolist())


def test_provenance_without_judge(demo_runs):
    table = report.provenance(read_run(demo_runs[0])).set_index("field")["value"]
    assert table["judge"].startswith("none")
    assert len(table["document sha256"]) == 64  # recorded by save_results from the document file
    assert table["run folder"] == "baseline"


def test_figures(demo_runs):
    run = read_run(demo_runs[0])
    grid = report.score_distributions(run)
    # one subplot per evaluator (the status row aside), each of stacked pass / fail bars
    assert len({t.xaxis for t in grid.data}) == len(evalkit.summary(run)) - 1
    assert {t.name for t in grid.data} == {"pass", "fail"} and grid.layout.barmode == "stack"
    turns = report.thread_turns(run)
    assert turns is not None and len(turns.data) == 1
    single = run[run["turn"].isna()]
    single.attrs = run.attrs
    assert report.thread_turns(single) is None


def test_export_renders_outputs_only():
    """Code, the parameters cell, removed cells and stderr stay out; markdown and HTML are kept, escaped."""
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_markdown_cell("# Intro <i>x</i>", metadata={"tags": ["remove-cell"]}),
        nbformat.v4.new_code_cell("secret_code = 1", metadata={"tags": ["parameters"]}),
        nbformat.v4.new_markdown_cell("## Part <b>one</b>\n\nUse `read_run` **now**."),
        nbformat.v4.new_code_cell("visible_code()"),
    ]
    nb.cells[3].outputs = [
        nbformat.v4.new_output("stream", name="stdout", text="hello <you>"),
        nbformat.v4.new_output("stream", name="stderr", text="WARNING noise"),
        nbformat.v4.new_output("display_data", data={"text/html": "<p id='kept'>kept</p>"}),
        nbformat.v4.new_output(
            "display_data",
            data={
                report.PLOTLY_MIME: {
                    "data": [{"type": "bar", "y": [1, float("nan")], "name": XSS}],
                    "layout": {},
                }
            },
        ),
        nbformat.v4.new_output(
            "display_data", data={report.META_MIME: {"title": "Recorded"}, "text/html": ""}
        ),
    ]
    page = report.export_html(nb)
    assert "<title>Recorded</title>" in page
    assert "Intro" not in page and "secret_code" not in page and "visible_code" not in page
    assert "<h2>Part &lt;b&gt;one&lt;/b&gt;</h2>" in page
    assert "<code>read_run</code> <strong>now</strong>" in page
    assert "hello &lt;you&gt;" in page and "WARNING noise" not in page
    assert "<p id='kept'>kept</p>" in page
    assert figures_in(page) == 1
    assert XSS not in page and "\\u003cscript\\u003e" in page  # the figure JSON cannot close its element
    data = re.search(r"id='evalkit-figure-0-data'>(.*?)</script>", page).group(1)
    assert json.loads(data)["data"][0]["y"] == [1, None]
    assert report.export_html(nb, title="Given").count("<title>Given</title>") == 1
    # on the one report page: the items table and item view are there (empty without a run)
    assert 'id="items-body"' in page and 'id="item-view"' in page
    # without figures there is no plotly.js, and the style is allowed by hash only
    from plotly.offline import get_plotlyjs

    assert get_plotlyjs()[:200] in page
    nb.cells[3].outputs = nb.cells[3].outputs[:3]
    bare = report.export_html(nb)
    assert get_plotlyjs()[:200] not in bare and "style-src 'sha256-" in html.unescape(bare)


def test_urls_lose_credentials():
    text = "see https://u:p@h.example/path?key=1#frag and http://plain.example/x"
    assert _without_url_secrets(text) == "see https://h.example/path and http://plain.example/x"


def test_header_records_title(demo_runs):
    run = read_run(demo_runs[1])
    head = report.header(run, None, read_run(demo_runs[0]))
    bundle = head._repr_mimebundle_()
    assert bundle[report.META_MIME] == {"title": "Demo & <b>friends</b>"}
    assert "<h1>Demo &amp; &lt;b&gt;friends&lt;/b&gt;</h1>" in bundle["text/html"]
    assert "baseline baseline" in bundle["text/html"]
