"""Keys go only where the user said (issue 29 item 1): an eval document cannot name an endpoint, a key or a key
variable (``evalkit.documents.destinations``); the command line and the Python API still can."""

from __future__ import annotations

import json

import pytest

import evalkit
from evalkit.cli import main
from evalkit.documents.destinations import destination_fields, refuse_destinations
from evalkit.errors import DocumentError
from evalkit.testing import ModelServer

SECRET = "ghp_0123456789abcdefghijklmnopqrstuvwxyzAB"
WHERE = (
    "an eval document cannot choose where requests go or which key they carry; endpoints, keys and key "
    "variables come from the command line (--evaluator 'NAME={...}'), the Python API (evaluate(evaluators=..., "
    "model_config=...)), the environment (OPENAI_BASE_URL, OPENAI_API_KEY, AZURE_AI_OPENAI_ENDPOINT, ...) or "
    "your .env / .env.local file"
)


@pytest.fixture
def judge_env(model_server, monkeypatch):
    monkeypatch.setenv("OPENAI_BASE_URL", model_server.openai_base_url)
    monkeypatch.setenv("OPENAI_MODEL", "judge")
    monkeypatch.setenv("OPENAI_API_KEY", "k")
    return model_server


@pytest.fixture
def elsewhere():
    """Another endpoint, which takes only the key in $GITHUB_TOKEN (a stand-in for an attacker's host)."""
    with ModelServer(require_key=SECRET) as server:
        yield server


def _doc(path, jurors, evaluators_at="default"):
    entry = {"Relevance": {"jury": {"jurors": jurors}}}
    item = {"prompt": "How do I reset my password?", "response": "Open settings and reset it."}
    doc = {"schemaVersion": "1.11.0", "items": [item]}
    if evaluators_at == "default":
        doc["default_evaluators"] = entry
    else:
        item["evaluators"] = entry
    path.write_text(json.dumps(doc))
    return path


def test_a_document_jury_cannot_send_an_environment_secret_to_its_own_host(
    judge_env, elsewhere, project, monkeypatch, capsys
):
    monkeypatch.setenv("GITHUB_TOKEN", SECRET)
    juror = {
        "model": "judge",
        "label": "far",
        "base_url": elsewhere.openai_base_url,
        "api_key_env": "GITHUB_TOKEN",
    }
    doc = _doc(project.root / "doc.json", [juror, "judge"])
    code = main(["run", str(doc), "--out", str(project.root / "out")])
    err = capsys.readouterr().err
    assert code == 2
    assert err == (
        f"Error: {doc}: default_evaluators.Relevance.jury.jurors[0].base_url: {WHERE}: remove these fields from "
        "the document\n"
        "  - default_evaluators.Relevance.jury.jurors[0].base_url\n"
        "  - default_evaluators.Relevance.jury.jurors[0].api_key_env\n"
    )
    assert elsewhere.request_count == 0 and judge_env.request_count == 0
    assert not (project.root / "out").exists()


def test_the_refusal_does_not_say_whether_the_variable_is_set(judge_env, project, monkeypatch, capsys):
    """No oracle: the message is the same with the named variable set and unset."""
    juror = {"model": "j", "base_url": "http://127.0.0.1:9/v1", "api_key_env": "AWS_SECRET_ACCESS_KEY"}
    doc = _doc(project.root / "doc.json", [juror, "judge"], evaluators_at="item")
    messages = []
    for value in (None, "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"):
        if value is None:
            monkeypatch.delenv("AWS_SECRET_ACCESS_KEY", raising=False)
        else:
            monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", value)
        assert main(["run", str(doc), "--out", str(project.root / "out")]) == 2
        messages.append(capsys.readouterr().err)
    assert messages[0] == messages[1]
    assert "items[0].evaluators.Relevance.jury.jurors[0].base_url" in messages[0]
    assert "not set" not in messages[0] and "AWS_SECRET_ACCESS_KEY" not in messages[0]


def test_evaluator_options_cannot_carry_a_model_configuration(project):
    """A custom evaluator's free-form options, a thread turn's map, any depth: every field is named."""
    options = {"model": {"azure_endpoint": "https://x.example", "api_key": "k", "azure_deployment": "gpt"}}
    doc = {
        "schemaVersion": "1.11.0",
        "items": [
            {
                "turns": [
                    {"prompt": "hi", "response": "hello"},
                    {"prompt": "p", "response": "r", "evaluators": {"tone": {"options": options}}},
                ]
            }
        ],
    }
    with pytest.raises(DocumentError) as raised:
        evalkit.load(doc)
    assert raised.value.exit_code == 2
    assert raised.value.problems == [
        "items[0].turns[1].evaluators.tone.options.model.azure_endpoint",
        "items[0].turns[1].evaluators.tone.options.model.api_key",
    ]
    assert str(raised.value).startswith(
        f"<document>: items[0].turns[1].evaluators.tone.options.model.azure_endpoint: {WHERE}"
    )


def test_evalkit_validate_refuses_it_too(project, capsys):
    path = project.root / "doc.json"
    path.write_text(
        json.dumps(
            {
                "schemaVersion": "1.11.0",
                "items": [{"prompt": "p", "evaluators": {"tone": {"options": {"headers": {"x": "y"}}}}}],
            }
        )
    )
    assert main(["validate", str(path)]) == 2
    assert capsys.readouterr().err == (
        f"Error: {path}: items[0].evaluators.tone.options.headers: {WHERE}: remove it from the document\n"
    )


@pytest.mark.parametrize(
    "name",
    [
        "base_url", "baseUrl", "api_base", "azure_endpoint", "endpoint", "api_key", "apiKey", "api_key_env",
        "x-api-key", "Authorization", "default_headers", "http_proxy", "proxies", "connection", "webhook_url",
        "password", "access_token", "host",
    ],
)  # fmt: skip
def test_destination_names(name):
    assert destination_fields({"Relevance": {"jury": [{name: "x"}]}}) == [("Relevance", "jury", 0, name)]


@pytest.mark.parametrize(
    "entry",
    [
        {"threshold": 3, "jury": {"jurors": ["gpt-4o", {"model": "meta-llama/Llama-3-70b", "label": "L"}]}},
        {"options": {"key": "answer", "max_tokens": 5, "case_sensitive": True, "source": "https://docs/x"}},
        {"citation_format": "markdown"},
    ],
)
def test_ordinary_options_are_not_destinations(entry):
    assert destination_fields({"E": entry}) == []


def test_a_juror_model_that_is_a_url_is_refused():
    doc = {
        "default_evaluators": {"Relevance": {"jury": ["http://evil.example/v1", {"model": "https://e/v1"}]}}
    }
    with pytest.raises(DocumentError) as raised:
        refuse_destinations(doc, "d.json")
    assert raised.value.problems == [
        "default_evaluators.Relevance.jury[0]",
        "default_evaluators.Relevance.jury[1].model",
    ]


def test_the_python_api_and_the_command_line_still_choose_jurors_on_other_endpoints(
    judge_env, elsewhere, project, monkeypatch, capsys
):
    """Where the user configures the run, a juror names its endpoint and the variable holding its key."""
    monkeypatch.setenv("JUROR_KEY", SECRET)
    juror = {"model": "judge~+1", "base_url": elsewhere.openai_base_url, "api_key_env": "JUROR_KEY"}
    table = evalkit.load(_doc(project.root / "plain.json", ["a", "b"]))[["prompt", "response"]]
    scored = evalkit.evaluate(table, evaluators={"Relevance": {"jury": [juror, "judge"]}}, cache=False)
    assert scored["relevance_details"][0]["jury"]["jurors"] == ["judge~+1", "judge"]
    assert elsewhere.request_count == 1 and judge_env.request_count == 1  # the key was accepted there

    doc = project.root / "doc.json"
    doc.write_text(json.dumps({"schemaVersion": "1.11.0", "items": [{"prompt": "p", "response": "r"}]}))
    entry = json.dumps({"jury": [juror, "judge"]})
    code = main(["run", str(doc), "--out", str(project.root / "out"), "--evaluator", f"Relevance={entry}"])
    assert code == 0, capsys.readouterr()
    assert elsewhere.request_count == 2
