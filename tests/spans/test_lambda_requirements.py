"""``evalkit spans package NAME --requirements requirements.txt``: third-party packages in the Lambda zip.

The real thing: the evaluator decorated with AWS's SDK (``tests/spans/data/sdk_evaluators/final_answer``) is
packaged with its pinned requirements (``bedrock-agentcore`` and what its import needs), pip taking the
wheels from the wheelhouse ``scripts/setup.sh`` downloads (``PIP_NO_INDEX=1``: no network), for this
machine's Python and architecture; the zip is unzipped and its handler run in a fresh interpreter
(``python -I -S``) that sees only the unzipped folder, on AgentCore events.
"""

from __future__ import annotations

import json
import os
import platform
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from evalkit.errors import EvalkitError
from evalkit.spans.lambdas.packaging import build_package, plan_package
from evalkit.spans.lambdas.requirements_bundle import LambdaRuntime, read_pinned

DATA = Path(__file__).resolve().parent / "data"
SDK_EVALUATORS = DATA / "sdk_evaluators"
REQUIREMENTS = SDK_EVALUATORS / "final_answer" / "requirements.txt"
SPLIT_EVENT = DATA / "agentcore_sdk_split_format_event.json"
DECORATOR_EVENT = DATA / "agentcore_sdk_decorator_event.json"
#: scripts/setup.sh downloads the wheels of REQUIREMENTS here, beside the venv's interpreter.
WHEELHOUSE = Path(sys.prefix) / "wheelhouse"
THIS_PYTHON = f"{sys.version_info[0]}.{sys.version_info[1]}"
THIS_ARCHITECTURE = {"x86_64": "x86_64", "aarch64": "arm64", "arm64": "arm64"}[platform.machine()]

RUN_HANDLER = """
import importlib, importlib.util, json, os, sys
sys.path.insert(0, os.getcwd())
for name in ("evalkit", "bedrock_agentcore"):
    spec = importlib.util.find_spec(name)
    assert spec is None or os.path.dirname(spec.origin).startswith(os.getcwd()), (name, spec.origin)
module_name, _, function = sys.argv[1].rpartition(".")
handler = getattr(importlib.import_module(module_name), function)
print(json.dumps([handler(event, None) for event in json.load(sys.stdin)]))
"""


def offline_pip(monkeypatch) -> None:
    if not WHEELHOUSE.is_dir():
        pytest.fail(f"no wheelhouse at {WHEELHOUSE}: run scripts/setup.sh (it downloads the test's wheels)")
    monkeypatch.setenv("PIP_NO_INDEX", "1")
    monkeypatch.setenv("PIP_FIND_LINKS", str(WHEELHOUSE))


def test_the_sdk_evaluator_zip_runs_in_a_fresh_interpreter_with_only_the_zip(tmp_path, monkeypatch):
    offline_pip(monkeypatch)
    out = tmp_path / "final_answer.zip"
    done = subprocess.run(
        [sys.executable, "-m", "evalkit", "spans", "package", "final_answer"]
        + ["--custom-dir", str(SDK_EVALUATORS), "--requirements", str(REQUIREMENTS)]
        + ["--python", THIS_PYTHON, "--architecture", THIS_ARCHITECTURE, "--out", str(out)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    assert f"Targets Lambda runtime python{THIS_PYTHON} on {THIS_ARCHITECTURE}" in done.stdout
    assert "pick another with --python 3.X and --architecture x86_64|arm64" in done.stdout
    assert "bedrock-agentcore==1.25.0, boto3==" in done.stdout
    assert done.stdout.splitlines()[-1] == "Handler: lambda_function.handler"
    with zipfile.ZipFile(out) as archive:
        names = archive.namelist()
        archive.extractall(tmp_path / "task")
    tops = {name.split("/")[0] for name in names}
    assert {"lambda_function.py", "bedrock_agentcore", "boto3", "botocore", "pydantic_core"} <= tops
    assert "bin" not in tops and not any(n.endswith(".pyc") for n in names)
    events = [json.loads(SPLIT_EVENT.read_text()), json.loads(DECORATOR_EVENT.read_text())]
    run = subprocess.run(
        [sys.executable, "-I", "-S", "-c", RUN_HANDLER, "lambda_function.handler"],
        cwd=tmp_path / "task",
        input=json.dumps(events),
        capture_output=True,
        text=True,
        env={"PATH": os.environ.get("PATH", "")},
        timeout=120,
    )
    assert run.returncode == 0, run.stderr
    answered, no_answer = json.loads(run.stdout)
    assert answered == {
        "value": 1.0,
        "label": "ANSWERED",
        "explanation": "AI is artificial intelligence.",
        "errorCode": None,
        "errorMessage": None,
    }
    assert no_answer["label"] == "NO_ANSWER"


def test_without_requirements_the_sdk_import_is_a_packaging_error(tmp_path):
    with pytest.raises(EvalkitError) as caught:
        plan_package("final_answer", SDK_EVALUATORS)
    message = str(caught.value)
    assert "imports 'bedrock_agentcore'" in message
    assert (
        "List its distribution, pinned, in a requirements file (--requirements requirements.txt)" in message
    )


def test_a_requirement_without_a_linux_wheel_names_the_runtime(tmp_path, monkeypatch):
    offline_pip(monkeypatch)
    requirements = tmp_path / "requirements.txt"
    requirements.write_text("no-such-distribution-here==1.0\n")
    with pytest.raises(EvalkitError) as caught:
        build_package(
            "final_answer",
            tmp_path / "x.zip",
            SDK_EVALUATORS,
            requirements=requirements,
            runtime=LambdaRuntime("3.12", "arm64"),
        )
    message = str(caught.value)
    assert message.startswith(f"pip could not install {requirements} for Lambda runtime python3.12 on arm64")
    assert "no-such-distribution-here" in message
    assert not (tmp_path / "x.zip").exists()


@pytest.mark.parametrize(
    ("line", "number"),
    [
        ("bedrock-agentcore>=1.0", 3),
        ("bedrock-agentcore", 3),
        ("bedrock-agentcore==1.*", 3),
        ("-e ./local", 3),
        ("https://example.invalid/x.whl", 3),
        ("-r other.txt", 3),
    ],
)
def test_unpinned_lines_are_refused_before_pip_runs(tmp_path, line, number):
    requirements = tmp_path / "requirements.txt"
    requirements.write_text(f"# pinned\nboto3==1.44.8\n{line}\n")
    with pytest.raises(EvalkitError) as caught:
        build_package("final_answer", tmp_path / "x.zip", SDK_EVALUATORS, requirements=requirements)
    message = str(caught.value)
    assert message.startswith(f"{requirements} line {number}: {line!r} is not pinned")
    assert "every requirement must be 'name==version'" in message


def test_pinned_forms_pip_writes_are_read(tmp_path):
    requirements = tmp_path / "requirements.txt"
    requirements.write_text(
        "# from pip-compile --generate-hashes\n"
        "boto3==1.44.8 \\\n    --hash=sha256:abc \\\n    --hash=sha256:def\n"
        "pydantic[email]==2.14.4  # via bedrock-agentcore\n"
        'typing-extensions==4.16.0 ; python_version < "4"\n\n'
    )
    assert read_pinned(requirements) == [
        "boto3==1.44.8",
        "pydantic[email]==2.14.4",
        'typing-extensions==4.16.0 ; python_version < "4"',
    ]
    requirements.write_text("# nothing\n")
    with pytest.raises(EvalkitError, match="lists no requirement"):
        read_pinned(requirements)
    with pytest.raises(EvalkitError, match="requirements file not found"):
        read_pinned(tmp_path / "missing.txt")


def test_the_runtime_picks_the_wheel_platforms():
    assert LambdaRuntime().platforms == ["manylinux2014_x86_64", "manylinux_2_34_x86_64"]
    assert LambdaRuntime("3.11", "arm64").platforms == ["manylinux2014_aarch64", "manylinux_2_26_aarch64"]
    with pytest.raises(EvalkitError, match="is not 3.X"):
        LambdaRuntime("3")
    with pytest.raises(EvalkitError, match="not one of Lambda's: x86_64, arm64"):
        LambdaRuntime("3.12", "aarch64")


def test_lambda_size_limits_are_noted(capsys):
    from types import SimpleNamespace

    from evalkit.cli.spans.package import _size_notes

    _size_notes(SimpleNamespace(size=60 * 2**20, unzipped=120 * 2**20))
    assert (
        capsys.readouterr().out
        == "Note: the zip is past the 50 MB Lambda takes as a direct upload: upload it through S3\n"
    )
    _size_notes(SimpleNamespace(size=90 * 2**20, unzipped=300 * 2**20))
    assert "past Lambda's 250 MB limit: the function would not deploy" in capsys.readouterr().out
    _size_notes(SimpleNamespace(size=21 * 2**20, unzipped=46 * 2**20))
    assert capsys.readouterr().out == ""


@pytest.mark.parametrize("kind", ["device", "fifo", "folder", "too large"])
def test_a_requirements_file_goes_through_the_input_checks_of_documents(kind, tmp_path, monkeypatch):
    """/dev/zero once read until MemoryError and a FIFO hung: both are refused before pip or a read."""
    if kind == "device":
        path, problem = Path("/dev/zero"), "is a character device, not a regular file"
    elif kind == "fifo":
        path, problem = tmp_path / "pipe", "is a named pipe (FIFO), not a regular file"
        os.mkfifo(path)
    elif kind == "folder":
        path, problem = tmp_path, "is a directory, not a requirements file"
    else:
        path, problem = tmp_path / "requirements.txt", "is larger than the limit of 100 bytes (121 bytes)"
        path.write_text("boto3==1.44.8\n" + "#" * 106 + "\n")
        monkeypatch.setenv("EVALKIT_MAX_DOCUMENT_BYTES", "100")
    with pytest.raises(EvalkitError) as caught:
        build_package("final_answer", tmp_path / "x.zip", SDK_EVALUATORS, requirements=path)
    assert str(caught.value).startswith(f"cannot read the requirements file {path}: {problem}")
    assert not (tmp_path / "x.zip").exists()
