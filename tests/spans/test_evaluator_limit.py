"""AgentCore takes at most 10 evaluators per Evaluate call or online configuration: ``spans eval`` too."""

from __future__ import annotations

import json
import textwrap

from tests.spans.test_spans import MARKET, run_cli, write_evaluator


def _evaluators(custom, count: int) -> list[str]:
    names = [f"check{i}" for i in range(count)]
    for name in names:
        write_evaluator(
            custom,
            name,
            textwrap.dedent(
                """
                EVALUATION_LEVEL = "SESSION"
                def lambda_handler(event, context):
                    return {"label": "PASS", "value": 1.0}
                """
            ),
        )
    return names


def test_spans_eval_takes_ten_evaluators_and_refuses_eleven(tmp_path, capsys):
    custom = tmp_path / "custom-evaluators"
    names = _evaluators(custom, 11)
    base = ["spans", "eval", str(MARKET), "--custom-dir", str(custom)]
    ten = [arg for name in names[:10] for arg in ("--evaluator", name)]
    assert run_cli([*base, *ten, "--out", str(tmp_path / "ten")]) == 0
    results = json.loads((tmp_path / "ten" / "results.json").read_text())["evaluationResults"]
    assert len(results) == 20  # 10 evaluators x 2 sessions
    capsys.readouterr()

    eleven = [*ten, "--evaluator", names[10]]
    assert run_cli([*base, *eleven, "--out", str(tmp_path / "eleven")]) == 2
    assert "11 span evaluators given: AgentCore takes at most 10" in capsys.readouterr().out
    assert not (tmp_path / "eleven").exists()
