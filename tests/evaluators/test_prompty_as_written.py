"""promptflow ``.prompty`` judges as their authors ship them, run as custom evaluators against ``ModelServer``.

The files are promptflow's and azure-ai-evaluation's own (``data/prompty/SOURCE.md``; the installed
azure-ai-evaluation's prompts are read from the package). They go through the real promptflow code: a file
that names a ``connection`` (or its own deployment, ``${env:...}`` endpoints) runs on evalkit's judge model
with one notice, and answers shaped other than ``{"score"}`` are read by the wrapper (``read_judge_answer``)
or refused with a message that says what the wrapper must return.
"""

from __future__ import annotations

import json
import logging
import shutil
from pathlib import Path

import pytest

import evalkit
from evalkit.judges.offline import import_promptflow_quietly

import_promptflow_quietly()  # before azure-ai-evaluation is imported below (at collection, before conftest's hook)
DATA = Path(__file__).parent / "data" / "prompty"
SITE_PROMPTS = Path(__import__("azure.ai.evaluation", fromlist=["_"]).__file__).parent / "_evaluators"

#: A wrapper in the style of promptflow-evals' samples: the model configuration handed straight to load_flow
#: (no "type"), the judge's own fields read by hand. ``{call}`` / ``{read}`` are filled per judge.
WRAPPER = """
import json
from pathlib import Path

from evalkit.judges.judge_answers import read_judge_answer


class Judge:
    def __init__(self, *, model_config, threshold=3, options=None, **_):
        from promptflow.client import load_flow

        self._flow = load_flow(source=str(Path(__file__).with_suffix(".prompty")), model={{"configuration": model_config}})

    def __call__(self, *, prompt="", response="", context="", **_):
        answer = self._flow({call})
        data = json.loads(answer) if isinstance(answer, str) and answer.lstrip().startswith("{{") else answer
        return {read}
"""


def install(project, name: str, prompty: Path, *, call: str, read: str) -> Path:
    """``custom-evaluators/<name>/`` holding the shipped ``prompty`` (and the files beside it) and a wrapper."""
    home = project.custom / name
    if prompty.parent != DATA and prompty.parent.parent == DATA:
        shutil.copytree(prompty.parent, home)  # the prompty's folder: sample.json beside it
        (home / prompty.name).rename(home / f"{name}.prompty")
    else:
        home.mkdir()
        shutil.copyfile(prompty, home / f"{name}.prompty")
    (home / f"{name}.py").write_text(WRAPPER.format(call=call, read=read))
    return home


def openai(server) -> dict:
    return {"base_url": server.openai_base_url, "model": "judge", "api_key": "k"}


def azure(server) -> dict:
    return {
        "azure_endpoint": server.azure_endpoint,
        "azure_deployment": "judge-deployment",
        "api_version": "2024-12-01-preview",
        "api_key": "k",
    }


def document(name: str, *items: tuple[str, str]) -> dict:
    return {
        "schemaVersion": "1.11.0",
        "default_evaluators": {name: {}},
        "items": [{"prompt": prompt, "response": response} for prompt, response in items],
    }


def evaluate(doc: dict, config: dict):
    return evalkit.evaluate(evalkit.load(doc), model_config=config, cache=False, progress=False)


def apology_answer(request) -> dict:
    """What a model answers the apology prompt: 1 when the judged assistant line apologises."""
    text = request["body"]["messages"][-1]["content"]
    judged = text.rsplit("assistant:", 1)[-1].lower()
    return {"apology": int("sorry" in judged)}


APOLOGY_ROWS = [
    ("Where is my order?", "Sorry, I cannot find your order."),
    ("What time is it?", "It is 10 o'clock."),
    ("Can you help?", "I'm sorry, no."),
]
#: apology 1 (the assistant apologised) scores 1, apology 0 scores 5: the wrapper maps the judge's 0/1 scale.
APOLOGY_READ = '{"score": 1 if int(data["apology"]) else 5, "reason": "apology=%s" % data["apology"]}'


@pytest.mark.parametrize("endpoint", [openai, azure])
@pytest.mark.parametrize(
    ("prompty", "call"),
    [
        (DATA / "evals_sample_apology.prompty", "question=prompt, answer=response"),
        (DATA / "eval_apology" / "apology.prompty", "question=prompt, answer=response, messages=[]"),
    ],
    ids=["promptflow-evals-sample", "promptflow-example"],
)
def test_a_prompty_naming_a_connection_runs_on_the_judge_model(
    project, model_server, caplog, endpoint, prompty, call
):
    assert "connection: open_ai_connection" in prompty.read_text()  # as shipped
    install(project, "apology", prompty, call=call, read=APOLOGY_READ)
    model_server.script = apology_answer
    config = endpoint(model_server)
    with caplog.at_level(logging.INFO, logger="evalkit"):
        scored = evaluate(document("apology", *APOLOGY_ROWS), config)
    assert scored["apology_error"].isna().all(), scored["apology_error"].tolist()
    assert scored["apology"].tolist() == [1.0, 5.0, 1.0]
    assert scored["apology_reason"].tolist() == ["apology=1", "apology=0", "apology=1"]
    # Every request went to evalkit's judge model, none to the file's deployment (gpt-4 / gpt-4o).
    assert model_server.request_count == 3
    for request in model_server.requests:
        if endpoint is openai:
            assert request["body"]["model"] == "judge"
        else:
            assert "/deployments/judge-deployment/" in request["path"]
        assert request["body"]["temperature"] == 0.2  # the file's parameters are kept
    notices = [r for r in caplog.records if "open_ai_connection" in r.getMessage()]
    assert len(notices) == 1, [r.getMessage() for r in notices]
    assert notices[0].levelno == logging.WARNING
    assert "'apology'" in notices[0].getMessage() and "apology.prompty" in notices[0].getMessage()


def test_the_connection_notice_comes_once_per_evaluator_per_run(project, model_server, caplog):
    install(
        project,
        "apology",
        DATA / "evals_sample_apology.prompty",
        call="question=prompt, answer=response",
        read=APOLOGY_READ,
    )
    model_server.script = apology_answer
    doc = document("apology", *APOLOGY_ROWS)
    # Two configurations of the same evaluator: two wrapper instances, still one notice.
    doc["items"][1]["evaluators"] = {"apology": {"threshold": 4}}
    with caplog.at_level(logging.WARNING, logger="evalkit"):
        evaluate(doc, openai(model_server))
        evaluate(doc, openai(model_server))
    notices = [r.getMessage() for r in caplog.records if "open_ai_connection" in r.getMessage()]
    assert len(notices) == 2  # one per run


def test_outside_evalkit_promptflow_still_refuses_the_mix(project, model_server):
    """The hook acts only while evalkit runs a custom judge: promptflow used directly behaves as shipped."""
    from promptflow.client import load_flow
    from promptflow.core._errors import InvalidConnectionError

    install(
        project,
        "apology",
        DATA / "evals_sample_apology.prompty",
        call="question=prompt, answer=response",
        read=APOLOGY_READ,
    )
    model_server.script = apology_answer
    evaluate(document("apology", APOLOGY_ROWS[0]), openai(model_server))
    with pytest.raises(InvalidConnectionError, match="at the same time"):
        load_flow(
            source=str(DATA / "evals_sample_apology.prompty"),
            model={"configuration": {"type": "openai", **openai(model_server)}},
        )


def test_the_hook_is_on_promptflow_prompty():
    """If an upgraded promptflow builds prompties elsewhere, this fails (and evalkit warns at run time)."""
    from promptflow.core import _flow

    from evalkit.judges.promptflow_models import install as install_hook

    assert install_hook()
    assert getattr(_flow.Prompty.__init__, "evalkit_hook", False)
    assert getattr(_flow.format_llm_response, "__wrapped__", None) is not None


def test_a_file_with_its_own_deployment_and_env_endpoints_runs_on_the_judge_model(
    project, model_server, caplog
):
    """eval-basic names azure_openai, gpt-4o and ${env:...} endpoints (unset here): all replaced, an info line."""
    install(
        project,
        "basic",
        DATA / "eval_basic.prompty",
        call="question=prompt, answer=response, ground_truth=context",
        read='read_judge_answer(answer, reason="explanation")',
    )
    model_server.script = [{"score": "5", "explanation": "paris is the capital of France"}]
    with caplog.at_level(logging.INFO, logger="evalkit"):
        scored = evaluate(
            document("basic", ("What is the capital of France?", "Paris")), openai(model_server)
        )
    assert scored.loc[0, "basic"] == 5 and scored.loc[0, "basic_result"] == "pass"
    assert scored.loc[0, "basic_reason"] == "paris is the capital of France"
    assert model_server.requests[0]["body"]["model"] == "judge"
    assert model_server.requests[0]["body"]["max_tokens"] == 200
    infos = [r.getMessage() for r in caplog.records if "names its own model configuration" in r.getMessage()]
    assert len(infos) == 1 and "azure_deployment: gpt-4o" in infos[0]


def test_a_string_score_returned_by_the_wrapper_is_refused_with_the_contract(project, model_server):
    """The wrapper passes eval-basic's "score": "5" through: evalkit does not convert it, it says how."""
    install(
        project,
        "basic",
        DATA / "eval_basic.prompty",
        call="question=prompt, answer=response, ground_truth=context",
        read='{"score": data["score"], "reason": data["explanation"]}',
    )
    model_server.script = [{"score": "5", "explanation": "right"}]
    scored = evaluate(document("basic", ("What is the capital of France?", "Paris")), openai(model_server))
    error = scored.loc[0, "basic_error"]
    assert scored.loc[0, "basic_result"] == "error"
    assert error.startswith("could not parse score: '5' is not a number")
    assert 'basic.py must return {"score": <integer 1-5>, "reason": "<text>"}' in error
    assert "the score is a string ('5'): convert it in basic.py" in error


CODE_QUALITY_ANSWER = {"correctness": 4, "readability": 5, "explanation": "Correct and short."}


def test_an_answer_under_other_keys_is_read_when_the_wrapper_names_them(project, model_server):
    install(
        project,
        "code_quality",
        DATA / "eval_code_quality" / "eval_code_quality.prompty",
        call="code=response",
        read='read_judge_answer(answer, score="correctness")',
    )
    model_server.script = [
        json.dumps(CODE_QUALITY_ANSWER)
    ]  # a text answer (the file sets no response_format)
    scored = evaluate(
        document("code_quality", ("Print hello", 'print("Hello, world!")')), openai(model_server)
    )
    assert scored.loc[0, "code_quality"] == 4
    assert scored.loc[0, "code_quality_reason"] == "Correct and short."


@pytest.mark.parametrize(
    ("read", "expected"),
    [
        # The scaffold's old reading, data["score"]: the wrapper fails; evalkit shows what the judge answered.
        (
            '{"score": data["score"], "reason": data.get("reason", "")}',
            [
                "could not parse score: code_quality.py could not read the judge's answer (KeyError: 'score')",
                "the judge answered",
                '"correctness": 4',
                'code_quality.py must return {"score": <integer 1-5>, "reason": "<text>"}',
                'read_judge_answer(answer, score="correctness")',
            ],
        ),
        # The wrapper returns the judge's answer as it is: evalkit refuses it and names the fields.
        (
            "data",
            [
                "could not parse score: the result has no 'score' key",
                'code_quality.py must return {"score": <integer 1-5>, "reason": "<text>"}',
                "returned the fields correctness, readability, explanation",
                'read_judge_answer(answer, score="correctness")',
            ],
        ),
        # read_judge_answer without naming the field: it says which one to name.
        (
            "read_judge_answer(answer)",
            [
                "could not parse score: the judge's answer has no 'score' field",
                "its fields: correctness, readability, explanation",
                'read_judge_answer(answer, score="correctness")',
            ],
        ),
    ],
    ids=["wrapper-keyerror", "raw-answer", "unnamed-field"],
)
def test_an_answer_under_other_keys_is_refused_saying_what_to_return(project, model_server, read, expected):
    install(
        project,
        "code_quality",
        DATA / "eval_code_quality" / "eval_code_quality.prompty",
        call="code=response",
        read=read,
    )
    model_server.script = [json.dumps(CODE_QUALITY_ANSWER)]
    scored = evaluate(
        document("code_quality", ("Print hello", 'print("Hello, world!")')), openai(model_server)
    )
    error = scored.loc[0, "code_quality_error"]
    assert scored.loc[0, "code_quality_code"] in ("judgeOutputUnparseable", "invalidEvaluatorResult")
    for part in expected:
        assert part in error, (part, error)


@pytest.mark.parametrize(
    ("prompty", "call"),
    [
        (DATA / "evals_relevance.prompty", "question=prompt, answer=response, context=context"),
        (DATA / "azure_ai_evaluation_fluency_tags.prompty", "response=response"),
        (SITE_PROMPTS / "_relevance" / "relevance.prompty", "query=prompt, response=response"),
        (SITE_PROMPTS / "_coherence" / "coherence.prompty", "query=prompt, response=response"),
    ],
    ids=["bare-integer", "s2-tags", "reason-score-status", "coherence"],
)
def test_shipped_answer_forms_are_read_by_read_judge_answer(project, model_server, prompty, call):
    """Unscripted: ModelServer answers each prompt in the form the prompt itself asks for."""
    from evalkit.testing.answers import heuristic_judge

    install(project, "shipped", prompty, call=call, read="read_judge_answer(answer)")
    rows = [
        ("What field did Marie Curie excel in?", "Marie Curie excelled in physics and chemistry."),
        ("What field did Marie Curie excel in?", "Bananas are yellow."),
    ]
    doc = document("shipped", *rows)
    doc["items"][0]["context"] = "Marie Curie was a physicist and chemist."
    scored = evaluate(doc, openai(model_server))
    assert scored["shipped_error"].isna().all(), scored["shipped_error"].tolist()
    assert model_server.request_count == 2
    for (_, response), score in zip(rows, scored["shipped"], strict=True):
        request = next(r for r in model_server.requests if response in json.dumps(r["body"]))
        assert request["body"]["model"] == "judge"
        answer = heuristic_judge(request)  # what the server sent back, in the prompt's own form
        assert f"{score:.0f}" in (answer, _tagged(answer), _json_score(answer)), (answer, score)


def _tagged(answer: str) -> str:
    return answer.split("<S2>", 1)[-1].split("</S2>", 1)[0] if "<S2>" in answer else ""


def _json_score(answer: str) -> str:
    return str(json.loads(answer).get("score")) if answer.startswith("{") else ""


def test_a_skipped_verdict_is_an_error_with_the_judges_reason(project, model_server):
    """azure-ai-evaluation's prompts answer {"score": null, "status": "skipped"} when there is nothing to judge."""
    install(
        project,
        "shipped_relevance",
        SITE_PROMPTS / "_relevance" / "relevance.prompty",
        call="query=prompt, response=response",
        read="read_judge_answer(answer)",
    )
    model_server.script = [{"reason": "The RESPONSE is empty.", "score": None, "status": "skipped"}]
    scored = evaluate(document("shipped_relevance", ("Q?", "A.")), openai(model_server))
    assert scored.loc[0, "shipped_relevance_result"] == "error"
    assert (
        scored.loc[0, "shipped_relevance_error"]
        == "the judge skipped this item (status 'skipped'): The RESPONSE is empty."
    )


@pytest.mark.parametrize(
    ("answer", "kwargs", "expected"),
    [
        ({"score": 4, "reason": "ok"}, {}, {"score": 4, "reason": "ok"}),
        ({"score": "5", "explanation": "e"}, {}, {"score": 5, "reason": "e"}),
        ('{"score": 3, "chain_of_thought": "c"}', {}, {"score": 3, "reason": "c"}),
        ("<S0>think</S0><S1>fine</S1><S2>4</S2>", {}, {"score": 4, "reason": "fine"}),
        (" 2\n", {}, {"score": 2, "reason": ""}),
        ({"apology": 1, "why": "w"}, {"score": "apology", "reason": "why"}, {"score": 1, "reason": "w"}),
        ({"score": "five"}, {}, {"score": "five", "reason": ""}),  # evalkit refuses it later, as a non-number
    ],
)
def test_read_judge_answer_forms(answer, kwargs, expected):
    from evalkit.judges.judge_answers import read_judge_answer

    assert read_judge_answer(answer, **kwargs) == expected


@pytest.mark.parametrize(
    ("answer", "message"),
    [
        ("This is not JSON {score: five", "not well-formed JSON"),
        ("[1, 2]", "is '[1, 2]', not a JSON object"),
        ({}, "has no 'score' field (it is an empty object)"),
    ],
)
def test_read_judge_answer_refusals(answer, message):
    from evalkit.judges.judge_answers import read_judge_answer
    from evalkit.judges.pool import JudgeFailure

    with pytest.raises(JudgeFailure, match="could not parse score") as caught:
        read_judge_answer(answer)
    assert message in str(caught.value) and caught.value.code == "judgeOutputUnparseable"


@pytest.mark.parametrize("wrapper", ["current", "earlier"])
def test_a_scaffolded_judge_whose_prompty_gains_a_connection_runs_unchanged(
    project, model_server, caplog, wrapper
):
    """A folder `evalkit new --llm` wrote (this version's wrapper or the earlier one, which reads data["score"]
    itself) with promptflow's connection block pasted into its .prompty: no edit to the wrapper needed."""
    from evalkit.evaluators.scaffold import earlier_llm_wrappers, scaffold
    from evalkit.notebook.judge_files import is_scaffold_wrapper

    scaffold("tone", project.custom, llm=True)
    home = project.custom / "tone"
    if wrapper == "earlier":
        (home / "tone.py").write_text(earlier_llm_wrappers("tone")[0])
    assert is_scaffold_wrapper("tone", (home / "tone.py").read_text())  # JudgeStudio still manages it
    prompty = home / "tone.prompty"
    block = "  configuration:\n    type: azure_openai\n    connection: open_ai_connection\n    azure_deployment: gpt-4\n"
    prompty.write_text(prompty.read_text().replace("  api: chat\n", "  api: chat\n" + block))
    with caplog.at_level(logging.WARNING, logger="evalkit"):
        scored = evaluate(document("tone", *APOLOGY_ROWS), azure(model_server))
    assert scored["tone_error"].isna().all(), scored["tone_error"].tolist()
    assert scored["tone"].between(1, 5).all()
    assert all("/deployments/judge-deployment/" in r["path"] for r in model_server.requests)
    assert sum("open_ai_connection" in r.getMessage() for r in caplog.records) == 1


def test_a_wrapper_that_passes_no_model_runs_on_the_judge_model_too(project, model_server):
    """promptflow's own examples load the file as it is (`load_flow(source=...)`), relying on its connection."""
    home = install(
        project,
        "apology",
        DATA / "evals_sample_apology.prompty",
        call="question=prompt, answer=response",
        read=APOLOGY_READ,
    )
    wrapper = home / "apology.py"
    wrapper.write_text(wrapper.read_text().replace(', model={"configuration": model_config}', ""))
    model_server.script = apology_answer
    scored = evaluate(document("apology", *APOLOGY_ROWS[:1]), openai(model_server))
    assert scored.loc[0, "apology"] == 1 and model_server.requests[0]["body"]["model"] == "judge"


def test_an_openai_typed_file_runs_on_an_azure_judge(project, model_server, caplog):
    """Hand-written edge (the shipped files are all azure_openai): type openai, its own model and base_url."""
    from evalkit.evaluators.scaffold import scaffold

    scaffold("tone", project.custom, llm=True)
    prompty = project.custom / "tone" / "tone.prompty"
    block = "  configuration:\n    type: openai\n    model: gpt-4o-mini\n    base_url: ${env:MY_OPENAI_BASE_URL}\n"
    prompty.write_text(prompty.read_text().replace("  api: chat\n", "  api: chat\n" + block))
    with caplog.at_level(logging.INFO, logger="evalkit"):
        scored = evaluate(document("tone", APOLOGY_ROWS[0]), azure(model_server))
    assert scored["tone_error"].isna().all(), scored["tone_error"].tolist()
    assert "/deployments/judge-deployment/" in model_server.requests[0]["path"]
    infos = [r.getMessage() for r in caplog.records if "names its own model configuration" in r.getMessage()]
    assert len(infos) == 1 and "type: openai, model: gpt-4o-mini" in infos[0]
