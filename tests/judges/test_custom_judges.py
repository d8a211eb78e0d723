"""Custom LLM judges: the bundled examples against the local model server, and template checks."""

from __future__ import annotations

import logging
import shutil
from pathlib import Path

import pytest

import evalkit

REPO = Path(__file__).resolve().parents[2]


def config(server):
    return {"base_url": server.openai_base_url, "model": "judge", "api_key": "k"}


def test_upstream_custom_evaluator_example_runs_with_the_bundled_judges(model_server, reference):
    path = reference / "m365-copilot-eval/schema/v1/examples/valid/custom-evaluators.json"
    df = evalkit.load(path)
    df["response"] = [
        "Submit it in the Expense portal under MyHR.",
        "Revenue grew 12% in Q4; the call covered margins and guidance.",
        "You can carry over up to 5 unused PTO days into next year.",
    ]
    scored = evalkit.evaluate(
        df,
        custom_dir=REPO / "custom-evaluators",
        model_config=config(model_server),
        cache=False,
        progress=False,
    )
    assert scored.loc[0, "professional_tone_threshold"] == 4
    assert scored.loc[1, "consistency_check_threshold"] == 3
    for key in ("relevance", "professional_tone", "consistency_check", "answer_accuracy"):
        asked = scored[f"{key}_result"].notna()
        assert scored.loc[asked, key].between(1, 5).all(), key
        assert scored.loc[asked, f"{key}_result"].isin(["pass", "fail"]).all(), key
    # consistency_check asked the model options.samples = 5 times for its one row.
    assert "median of [" in scored.loc[1, "consistency_check_reason"]
    assert scored.loc[1, "consistency_check_reason"].count(",") >= 4


def test_answer_accuracy_without_expected_response_uses_the_error_channel(model_server, project):
    shutil.copytree(REPO / "custom-evaluators/answer_accuracy", project.custom / "answer_accuracy")
    doc = {"schemaVersion": "1.11.0", "default_evaluators": {"answer_accuracy": {}},
           "items": [{"prompt": "Q?", "response": "A."}]}  # fmt: skip
    scored = evalkit.evaluate(evalkit.load(doc), model_config=config(model_server), progress=False)
    assert scored.loc[0, "answer_accuracy_error"] == "answer_accuracy needs the item's expected_response"
    assert model_server.request_count == 0


@pytest.mark.parametrize(
    ("front", "body", "warning"),
    [
        (
            "inputs:\n  response:\n    type: string\n",
            "{{response}} {{context}}",
            "uses {{context}}, which its inputs",
        ),
        ("", "{{response}}", "has no inputs: block"),
        ("inputs:\n  prompt:\n    type: string\n", "{{prompt}}", "uses 'prompt', which promptflow reserves"),
    ],
)
def test_template_mistakes_warn_at_load_time(project, caplog, front, body, warning):
    wrapper = (
        "class J:\n    def __init__(self, **_): pass\n    def __call__(self, **_): return {'score': 3}\n"
    )
    project.evaluator(
        "judge", wrapper, prompty=f"---\nname: judge\n{front}---\nsystem:\nGrade.\nuser:\n{body}\n"
    )
    doc = {
        "schemaVersion": "1.11.0",
        "default_evaluators": {"judge": {}},
        "items": [{"prompt": "Q", "response": "A"}],
    }
    with caplog.at_level(logging.WARNING, logger="evalkit"):
        scored = evalkit.evaluate(
            evalkit.load(doc), model_config={"base_url": "http://127.0.0.1:9", "model": "m"}, progress=False
        )
    assert any(warning in record.getMessage() for record in caplog.records)
    assert scored.loc[0, "judge"] == 3


def test_a_correct_template_gives_no_warning(project, caplog):
    shutil.copytree(REPO / "custom-evaluators/professional_tone", project.custom / "professional_tone")
    from evalkit.evaluators.custom.loading import load_custom

    with caplog.at_level(logging.WARNING, logger="evalkit"):
        load_custom("professional_tone", project.custom)
    assert not caplog.records
