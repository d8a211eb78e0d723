"""A span evaluator's module is imported in a worker, never in evalkit's process (issue 29, item 7).

``load_span_evaluator`` (``spans invoke``, ``spans eval``, ``spans serve``) learns the handler, its
``EVALUATION_LEVEL`` and ``PASSING_LABELS`` from a worker of the runner: top-level code that exits, patches
evalkit's response check or loops forever cannot end, fool or hang evalkit. A module that exits or overruns
while importing is a load error (exit 2, as a module that raises on import), naming the evaluator and its file.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from evalkit import spans
from evalkit.cli import main as cli_main
from evalkit.errors import EvaluatorConfigError
from evalkit.spans.lambdas import span_evaluator

EVENT = Path(__file__).resolve().parent / "data" / "agentcore_sdk_split_format_event.json"
MARKET = Path(__file__).resolve().parents[1] / "data" / "spans" / "market.jsonl"

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="the runner's workers are Linux processes")


def project(tmp_path: Path, top: str, body: str = "return {'label': 'PASS', 'value': 1.0}") -> Path:
    """``custom-evaluators/probe/probe.py`` running ``top`` on import."""
    custom = tmp_path / "custom-evaluators"
    path = custom / "probe" / "probe.py"
    path.parent.mkdir(parents=True)
    source = textwrap.dedent(top) + "\nEVALUATION_LEVEL = 'SESSION'\n\ndef lambda_handler(event, context):\n"
    path.write_text(source + textwrap.indent(textwrap.dedent(body), "    ") + "\n")
    return custom


def test_a_module_that_exits_on_import_is_a_load_error_of_spans_invoke(tmp_path):
    custom = project(tmp_path, "import os\nprint('about to leave')\nos._exit(0)\n")
    done = subprocess.run(
        [sys.executable, "-m", "evalkit", "spans", "invoke", "probe", "--custom-dir", str(custom),
         "--event", str(EVENT)],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    path = custom / "probe" / "probe.py"
    assert done.returncode == 2, done.stderr
    assert done.stdout == ""
    assert (
        f"Error: span evaluator 'probe': {path} failed to import: its process exited with code 0 while "
        "importing (os._exit or a signal in the module's top-level code)"
    ) in done.stderr
    assert "about to leave" in done.stderr  # what it printed before leaving, to find why
    assert "Traceback" not in done.stderr


PATCH = """
import evalkit.spans.lambdas.invocation as invocation
import evalkit.spans.lambdas.event_replay as event_replay
invocation.read_response = lambda out, handler="": {"label": "PASS"}
event_replay.read_response = invocation.read_response
invocation.data_fields = lambda data, function="": {"label": "PASS"}
"""


def test_a_module_cannot_patch_the_response_check_when_imported(tmp_path, capsys):
    custom = project(tmp_path, PATCH, "return {'label': 'FAIL', 'value': 7.5}")
    code = cli_main(["spans", "invoke", "probe", "--custom-dir", str(custom), "--event", str(EVENT)])
    captured = capsys.readouterr()
    assert code == 1, captured.err
    assert "(InvalidEvaluatorResponse): 'value' 7.5 is outside 0.0-1.0" in captured.err
    results = spans.evaluate_spans(MARKET, ["probe"], custom_dir=custom)
    assert [r.get("errorCode") for r in results] == ["InvalidEvaluatorResponse"] * 2
    assert "evalkit_span_evaluators.probe" not in sys.modules  # never imported here


def test_a_module_that_loops_forever_on_import_is_stopped_at_the_load_limit(tmp_path, monkeypatch, capsys):
    custom = project(tmp_path, "while True:\n    pass\n")
    path = custom / "probe" / "probe.py"
    message = (
        f"span evaluator 'probe': {path} did not finish importing within 1 s (its worker process was killed; "
        "look for a loop or a wait in the module's top-level code)"
    )
    with pytest.raises(EvaluatorConfigError) as raised:
        spans.load_span_evaluator("probe", custom, load_timeout=1)
    assert str(raised.value) == message
    monkeypatch.setattr(span_evaluator, "LOAD_LIMIT", 1.0)
    code = cli_main(["spans", "invoke", "probe", "--custom-dir", str(custom), "--event", str(EVENT)])
    captured = capsys.readouterr()
    assert code == 2
    assert captured.out == ""
    assert f"Error: {message}" in captured.err


def test_the_level_and_passing_labels_come_from_the_worker(tmp_path):
    custom = project(tmp_path, "import os\nPASSING_LABELS = ['OK', 'PID' + str(os.getpid())]\n")
    loaded = spans.load_span_evaluator("probe", custom)
    assert loaded.level == "SESSION"
    (label,) = loaded.passing_labels - {"OK"}
    assert label != f"PID{__import__('os').getpid()}"  # read in another process
    assert "evalkit_span_evaluators.probe" not in sys.modules
    assert loaded.handler({}, None) == {"label": "PASS", "value": 1.0}  # imported here on first use
    assert "evalkit_span_evaluators.probe" in sys.modules
    sys.modules.pop("evalkit_span_evaluators.probe")


def test_a_keyboard_interrupt_raised_on_import_is_a_load_error_naming_it(tmp_path):
    custom = project(tmp_path, "raise KeyboardInterrupt('not now')\n")
    with pytest.raises(EvaluatorConfigError) as raised:
        spans.load_span_evaluator("probe", custom)
    path = custom / "probe" / "probe.py"
    assert str(raised.value) == f"span evaluator 'probe': {path} failed to import: KeyboardInterrupt: not now"
