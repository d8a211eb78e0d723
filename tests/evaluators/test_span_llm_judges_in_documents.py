"""An LLM-as-judge span evaluator (``<name>.json``) named in an eval document judges each row's spans."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import evalkit
from evalkit.errors import EnvironmentConfigError

REPO = Path(__file__).resolve().parents[2]
SPANS = REPO / "data" / "agentcore_spans.jsonl"
CONFIG = {
    "level": "TRACE",
    "evaluatorConfig": {
        "llmAsAJudge": {
            "instructions": "Is the answer on topic?\n\n# Conversation\n{context}\n\n# Assistant response\n{assistant_turn}",
            "ratingScale": {
                "numerical": [
                    {"label": "Off topic", "value": 0.0, "definition": "about something else"},
                    {"label": "Partly", "value": 0.5, "definition": "partly on topic"},
                    {"label": "On topic", "value": 1.0, "definition": "entirely on topic"},
                ]
            },
        }
    },
}


def table(tmp_path: Path):
    folder = tmp_path / "custom-evaluators" / "on_topic"
    folder.mkdir(parents=True)
    (folder / "on_topic.json").write_text(json.dumps(CONFIG))
    doc = {
        "schemaVersion": "1.11.0",
        "default_evaluators": {"on_topic": {"threshold": 0.5}},
        "items": [
            {"prompt": "What is Apple stock trading at today?", "response": "recorded"},
            {"prompt": "Any news about Amazon stock?", "response": "recorded"},
        ],
    }
    path = tmp_path / "doc.json"
    path.write_text(json.dumps(doc))
    df = evalkit.load(path)
    docs = [json.loads(line) for line in SPANS.read_text().splitlines()]
    df["spans"] = [
        [d for d in docs if d["attributes"]["session.id"] == session]
        for session in ("sess-genai", "sess-strands")
    ]
    return df


def test_a_json_span_judge_in_a_document_scores_rows_through_the_run_judge(model_server, tmp_path):
    config = {"base_url": model_server.openai_base_url, "model": "judge", "api_key": "k"}
    df = table(tmp_path)
    scored = evalkit.evaluate(
        df, model_config=config, custom_dir=tmp_path / "custom-evaluators", progress=False
    )
    assert scored["status"].isin(["pass", "fail"]).all(), scored.filter(like="on_topic").to_dict("records")
    scores = scored["on_topic"].tolist()
    assert all(s in (0.0, 0.5, 1.0) for s in scores), scored.filter(like="on_topic").to_dict("records")
    assert model_server.request_count == 4  # two traces per session
    judge = scored.attrs["evalkit"]["judge"]
    assert judge["calls"] == 4 and judge["tokens"]["on_topic"]["prompt"] > 0
    assert judge["prompt_hashes"]["on_topic"].startswith("agentcore-llm:on_topic@")
    assert judge["parameters_by_evaluator"]["on_topic"] == {"temperature": 0.0, "max_tokens": 1024}


def test_no_judge_model_stops_the_run_with_exit_code_3(tmp_path):
    df = table(tmp_path)
    with pytest.raises(EnvironmentConfigError, match="on_topic"):
        evalkit.evaluate(df, custom_dir=tmp_path / "custom-evaluators", progress=False)


def test_an_agentcore_builtin_named_in_a_document_judges_each_rows_spans(model_server, tmp_path):
    """``Builtin.<Name>`` works in an evaluator map (seed 003 names them so; evalkit's schema allows the dot)."""
    df = table(tmp_path)
    df["evaluators"] = [{"Builtin.Helpfulness": {"threshold": 0.5}}] * len(df)
    config = {"base_url": model_server.openai_base_url, "model": "judge", "api_key": "k"}
    scored = evalkit.evaluate(
        df, model_config=config, custom_dir=tmp_path / "custom-evaluators", progress=False
    )
    records = scored.filter(like="Builtin.Helpfulness").to_dict("records")
    assert scored["Builtin.Helpfulness_result"].isin(["pass", "fail"]).all(), records
    assert all(0.0 <= s <= 1.0 for s in scored["Builtin.Helpfulness"]), records
    assert model_server.request_count == 4  # Helpfulness is a TRACE judge: two traces per session
    prompts = [r["body"]["messages"][-1]["content"] for r in model_server.requests]
    assert any("Apple" in p for p in prompts)


def test_a_document_naming_a_builtin_span_judge_is_valid_and_unknown_ones_are_refused(tmp_path):
    doc = {"schemaVersion": "1.11.0", "items": [{"prompt": "p", "evaluators": {"Builtin.Helpfulness": {}}}]}
    from evalkit.documents.validation import schema_problems

    assert schema_problems(doc) == [] and schema_problems(doc, fast_path=False) == []
    df = evalkit.load(doc)
    df["evaluators"] = [{"Builtin.Helpfulnes": {}}]
    with pytest.raises(evalkit.EvaluatorConfigError, match="not an AgentCore built-in evaluator"):
        evalkit.evaluate(df, progress=False)


def test_a_categorical_span_judge_scores_rows_by_its_passing_label(model_server, tmp_path):
    """Categorical results carry a label and no value (AgentCore's contract): in a document a passing label
    scores 1.0 and another 0.0, so the row's threshold still applies."""
    from evalkit.testing import Reply

    df = table(tmp_path)
    categorical = json.loads(json.dumps(CONFIG))
    categorical["evaluatorConfig"]["llmAsAJudge"]["ratingScale"] = {
        "categorical": [
            {"label": "Off topic", "definition": "about something else"},
            {"label": "On topic", "definition": "entirely on topic"},
        ]
    }
    (tmp_path / "custom-evaluators" / "on_topic" / "on_topic.json").write_text(json.dumps(categorical))
    model_server.script = [Reply({"label": "On topic"})] * 2 + [Reply({"label": "Off topic"})] * 2
    config = {"base_url": model_server.openai_base_url, "model": "judge", "api_key": "k"}
    scored = evalkit.evaluate(
        df, model_config=config, custom_dir=tmp_path / "custom-evaluators", progress=False, concurrency=1
    )
    records = scored.filter(like="on_topic").to_dict("records")
    assert scored["on_topic"].tolist() == [1.0, 0.0], records
    assert scored["on_topic_result"].tolist() == ["pass", "fail"], records
