"""``evalkit spans package``: AWS Lambda deployment zips of span evaluators, and the shared modules.

Each reference evaluator is packaged, unzipped and run in a fresh interpreter that cannot see evalkit or
site-packages (``-I -S``), with the recorded payloads of ``tests/data/reference_spans/``; its results must
be the ones evalkit's local run gives. The other tests build throwaway evaluator folders.
"""

from __future__ import annotations

import copy
import json
import os
import subprocess
import sys
import textwrap
import zipfile
from pathlib import Path

import pytest

from evalkit import spans
from evalkit.errors import EvalkitError
from evalkit.spans.lambdas.packaging import build_package, plan_package, span_evaluator_names

REPO = Path(__file__).resolve().parents[2]
CUSTOM = REPO / "custom-evaluators"
FIXTURES = REPO / "tests" / "data" / "reference_spans"
REFERENCE = ["pii_leak", "stock_price_drift", "tool_response_schema", "workflow_contract"]
ENV_VARS = (
    "REFERENCE_PRICES_PATH",
    "DRIFT_TOLERANCE_PERCENT",
    "WORKFLOW_GROUPS",
    "PII_CONTACT_THRESHOLD",
    "PRESIDIO_SCORE_THRESHOLD",
)

#: Run in ``python -I -S`` with the unzipped folder as the working directory: the Lambda task root on the
#: path, nothing else of this machine's packages, evalkit not importable.
RUN_HANDLER = """
import importlib, json, os, sys
sys.path.insert(0, os.getcwd())
try:
    import evalkit
except ImportError:
    pass
else:
    raise SystemExit("evalkit must not be importable here")
module_name, _, function = sys.argv[1].rpartition(".")
module = importlib.import_module(module_name)
assert os.path.dirname(os.path.abspath(module.__file__)) == os.getcwd(), module.__file__
handler = getattr(module, function)
events = json.load(sys.stdin)
print(json.dumps([handler(event, None) for event in events]))
"""


@pytest.fixture(autouse=True)
def clean_environment(monkeypatch):
    for var in ENV_VARS:
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("PII_USE_PRESIDIO", "0")


def write(root: Path, relative: str, source: str) -> Path:
    path = root / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(source), encoding="utf-8")
    return path


HANDLER = """
    def lambda_handler(event, context):
        return {"label": "PASS", "value": 1.0}
"""


@pytest.fixture
def custom(tmp_path) -> Path:
    """A custom-evaluators folder: two span evaluators, a code-only evaluator and a _shared folder."""
    root = tmp_path / "custom-evaluators"
    write(root, "alpha/alpha.py", "from helpers import label\n\n" + textwrap.dedent(HANDLER))
    write(root, "beta/beta.py", HANDLER)
    write(root, "code_only/code_only.py", "class CodeOnly:\n    pass\n")
    write(root, "_shared/helpers.py", "import json\n\nfrom texts import clip\n\nlabel = 'PASS'\n")
    write(root, "_shared/texts.py", "def clip(text):\n    return text[:10]\n")
    write(root, "_shared/unused.py", "VALUE = 1\n")
    return root


def unzip(path: Path, into: Path) -> Path:
    with zipfile.ZipFile(path) as archive:
        archive.extractall(into)
    return into


def run_isolated(folder: Path, handler: str, events: list[dict]) -> list[dict]:
    env = {"PII_USE_PRESIDIO": "0", "PATH": os.environ.get("PATH", "")}
    done = subprocess.run(
        [sys.executable, "-I", "-S", "-c", RUN_HANDLER, handler],
        cwd=folder,
        input=json.dumps(events),
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


# --- the reference evaluators ---------------------------------------------------------------------------


def test_the_reference_evaluators_are_the_span_evaluators_found():
    assert span_evaluator_names(CUSTOM) == REFERENCE


@pytest.mark.parametrize("name", REFERENCE)
def test_packaged_reference_evaluator_runs_without_evalkit_like_the_local_run(name, tmp_path):
    package = build_package(name, tmp_path / f"{name}.zip", CUSTOM)
    assert package.handler == f"{name}.lambda_handler"
    extra = ["reference_prices.json"] if name == "stock_price_drift" else []
    with zipfile.ZipFile(tmp_path / f"{name}.zip") as archive:
        assert archive.namelist() == sorted(["agentcore_spans.py", f"{name}.py", *extra])
    assert package.shared == ["agentcore_spans"]
    assert package.optional == (["presidio_analyzer"] if name == "pii_leak" else [])

    recorded = [
        json.loads(path.read_text(encoding="utf-8")) for path in sorted((FIXTURES / name).glob("*.json"))
    ]
    events = [item["event"] for item in recorded]
    local = spans.load_span_evaluator(name, CUSTOM)
    expected = [local.handler(copy.deepcopy(event), None) for event in events]
    deployed = run_isolated(unzip(tmp_path / f"{name}.zip", tmp_path / "task"), package.handler, events)
    assert deployed == expected
    assert [result["label"] for result in deployed] == [item["expected"]["label"] for item in recorded]


def test_the_same_folder_gives_the_same_bytes(tmp_path):
    first = build_package("stock_price_drift", tmp_path / "first.zip", CUSTOM)
    copy_root = tmp_path / "copy"
    for source in first.entries.values():
        target = copy_root / source.parent.name / source.name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(source.read_bytes())
        os.utime(target, (1_000_000_000, 1_000_000_000))  # other file times, other folder
    build_package("stock_price_drift", tmp_path / "second.zip", copy_root)
    assert (tmp_path / "first.zip").read_bytes() == (tmp_path / "second.zip").read_bytes()
    with zipfile.ZipFile(tmp_path / "first.zip") as archive:
        infos = archive.infolist()
    assert [info.filename for info in infos] == sorted(info.filename for info in infos)
    assert {info.date_time for info in infos} == {(1980, 1, 1, 0, 0, 0)}
    assert {info.external_attr >> 16 for info in infos} == {0o100644}


# --- what goes in -----------------------------------------------------------------------------------------


def test_only_the_shared_modules_used_go_in_followed_through_shared_imports(custom, tmp_path):
    write(custom, "alpha/prices.json", "{}")
    write(custom, "alpha/data/table.csv", "a,b\n")
    write(custom, "alpha/__pycache__/alpha.cpython-311.pyc", "")
    write(custom, "alpha/.DS_Store", "")
    package = build_package("alpha", tmp_path / "alpha.zip", custom)
    assert package.shared == ["helpers", "texts"]
    assert package.optional == []
    with zipfile.ZipFile(tmp_path / "alpha.zip") as archive:
        assert archive.namelist() == ["alpha.py", "data/table.csv", "helpers.py", "prices.json", "texts.py"]
    assert package.size == (tmp_path / "alpha.zip").stat().st_size


def test_a_module_of_the_evaluator_folder_wins_over_a_shared_one_and_is_followed(custom):
    write(custom, "beta/beta.py", "import helpers\n" + textwrap.dedent(HANDLER))
    write(custom, "beta/helpers.py", "import texts\n")
    package = plan_package("beta", custom)
    assert sorted(package.entries) == ["beta.py", "helpers.py", "texts.py"]
    assert package.entries["helpers.py"] == custom / "beta" / "helpers.py"
    assert package.shared == ["texts"]


def test_optional_imports_are_reported_not_bundled(custom):
    source = """
        try:
            import presidio_analyzer
        except ImportError:
            presidio_analyzer = None
        try:
            from unused import VALUE
        except Exception:
            VALUE = 0
        from typing import TYPE_CHECKING
        if TYPE_CHECKING:
            import pandas
    """
    write(custom, "beta/beta.py", textwrap.dedent(source) + textwrap.dedent(HANDLER))
    package = plan_package("beta", custom)
    assert package.optional == ["presidio_analyzer"]
    assert package.shared == ["unused"]


COMPREHEND = """
    import json

    import boto3
    from botocore.exceptions import ClientError

    comprehend = boto3.client("comprehend")


    def lambda_handler(event, context):
        try:
            found = comprehend.detect_pii_entities(Text=json.dumps(event), LanguageCode="en")
        except ClientError as exc:
            return {"errorCode": "ComprehendError", "errorMessage": str(exc)}
        return {"label": "FAIL" if found["Entities"] else "PASS", "value": 0.0 if found["Entities"] else 1.0}
"""


def test_the_aws_sdk_the_lambda_runtime_ships_is_left_out_and_reported(custom, tmp_path):
    # AWS's own Comprehend evaluator imports boto3, which every Lambda Python runtime provides.
    write(custom, "comprehend_pii/lambda_function.py", COMPREHEND)
    package = build_package("comprehend_pii", tmp_path / "c.zip", custom)
    assert package.runtime_sdk == ["boto3", "botocore"]
    assert package.third_party == [] and package.optional == []
    with zipfile.ZipFile(tmp_path / "c.zip") as archive:
        assert archive.namelist() == ["lambda_function.py"]
    done = evalkit_cli(
        "spans", "package", "comprehend_pii", "--custom-dir", str(custom), "--out", "c.zip", cwd=tmp_path
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[2:] == [
        "Left out, the Lambda Python runtime provides them (the AWS SDK): boto3, botocore",
        "Handler: lambda_function.lambda_handler",
    ]


def test_only_the_runtimes_own_sdk_is_left_out(custom):
    write(
        custom,
        "beta/beta.py",
        "import jmespath, dateutil.parser, urllib3, six, s3transfer\nimport requests\n"
        + textwrap.dedent(HANDLER),
    )
    with pytest.raises(EvalkitError, match=r"\(line 2\) imports 'requests', which is neither"):
        plan_package("beta", custom)


# --- errors ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["nope", "_shared", "code_only_x", "../alpha"])
def test_unknown_evaluator_lists_the_available_ones(custom, name):
    with pytest.raises(EvalkitError) as caught:
        plan_package(name, custom)
    assert str(caught.value) == f"span evaluator '{name}' not found in {custom} (available: alpha, beta)"


def test_unknown_evaluator_in_a_folder_without_any(tmp_path):
    with pytest.raises(EvalkitError) as caught:
        plan_package("alpha", tmp_path)
    assert str(caught.value) == (
        f"span evaluator 'alpha' not found in {tmp_path} (there are no span evaluators there)"
    )


def test_evaluator_without_lambda_handler(custom):
    with pytest.raises(EvalkitError) as caught:
        plan_package("code_only", custom)
    assert str(caught.value) == (
        f"cannot package: span evaluator 'code_only': {custom / 'code_only' / 'code_only.py'} defines no "
        "lambda_handler(event, context) or handler(event, context); define it, or name the handler as "
        "Lambda's handler setting does, 'module.function': handler='lambda_function.handler' in Python, "
        '{"handler": ...} in a document\'s evaluator options, --evaluator NAME@module.function or '
        "--handler module.function on the command line"
    )


def test_third_party_import_names_the_module(custom):
    write(custom, "beta/beta.py", "import json\nimport requests.adapters\n" + textwrap.dedent(HANDLER))
    with pytest.raises(EvalkitError) as caught:
        plan_package("beta", custom)
    assert str(caught.value) == (
        f"cannot package 'beta': {custom / 'beta' / 'beta.py'} (line 2) imports 'requests', which is neither "
        f"the standard library nor a shared module in {custom / '_shared'}, so the zip would not run on "
        "Lambda. List its distribution, pinned, in a requirements file (--requirements requirements.txt), "
        f"put the module in {custom / 'beta'}, or import an optional dependency inside try/except "
        "ImportError."
    )


def test_third_party_import_inside_a_shared_module_is_found(custom):
    write(custom, "_shared/texts.py", "def clip(text):\n    from yaml import safe_load\n    return text\n")
    with pytest.raises(EvalkitError) as caught:
        plan_package("alpha", custom)
    assert str(caught.value).startswith(
        f"cannot package 'alpha': {custom / '_shared' / 'texts.py'} (line 2) imports 'yaml', which is neither"
    )


def test_relative_import_and_syntax_error(custom):
    write(custom, "beta/beta.py", "from . import helpers\n" + textwrap.dedent(HANDLER))
    with pytest.raises(EvalkitError) as caught:
        plan_package("beta", custom)
    assert str(caught.value) == (
        f"cannot package 'beta': {custom / 'beta' / 'beta.py'} (line 1) uses a relative import, which cannot "
        "work at the root of the zip; import the module by its name"
    )
    write(custom, "_shared/helpers.py", "def broken(:\n")
    with pytest.raises(EvalkitError) as caught:
        plan_package("alpha", custom)
    assert str(caught.value) == (
        f"cannot package 'alpha': {custom / '_shared' / 'helpers.py'} has a syntax error: invalid syntax (line 1)"
    )


def test_output_path_problems(custom, tmp_path):
    with pytest.raises(EvalkitError) as caught:
        build_package("beta", tmp_path, custom)
    assert str(caught.value) == (
        f"output path {tmp_path} is a folder: give the zip file to write, e.g. {tmp_path / 'beta.zip'}"
    )
    for inside in (custom / "beta" / "beta.zip", custom / "_shared" / "beta.zip"):
        with pytest.raises(EvalkitError) as caught:
            build_package("beta", inside, custom)
        assert str(caught.value) == (
            f"output path {inside} is inside a folder being packaged; the next build would pack the zip into "
            "itself. Write it elsewhere."
        )
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(EvalkitError) as caught:
        build_package("beta", blocker / "beta.zip", custom)
    assert str(caught.value).startswith(f"cannot write {blocker / 'beta.zip'}: ")


def test_a_failed_build_leaves_the_previous_zip(custom, tmp_path):
    out = tmp_path / "beta.zip"
    build_package("beta", out, custom)
    before = out.read_bytes()
    write(custom, "beta/beta.py", "import requests\n" + textwrap.dedent(HANDLER))
    with pytest.raises(EvalkitError):
        build_package("beta", out, custom)
    assert out.read_bytes() == before
    assert [p.name for p in tmp_path.iterdir() if p.name != "custom-evaluators"] == ["beta.zip"]


# --- local runs see the shared modules ------------------------------------------------------------------


def test_local_load_imports_shared_modules_without_leaving_them_on_the_path(custom):
    write(
        custom,
        "alpha/alpha.py",
        "from helpers import label\n\ndef lambda_handler(event, context):\n    return {'label': label}\n",
    )
    before = list(sys.path)
    evaluator = spans.load_span_evaluator("alpha", custom)
    assert evaluator.handler({}, None) == {"label": "PASS"}
    assert sys.path == before


def test_each_custom_folder_gets_its_own_shared_modules(tmp_path):
    loaded = []
    for flavour in ("one", "two"):
        root = tmp_path / flavour
        write(root, "_shared/flavour_helper.py", f"FLAVOUR = {flavour!r}\n")
        write(
            root,
            "picker/picker.py",
            "from flavour_helper import FLAVOUR\n\ndef lambda_handler(event, "
            "context):\n    return {'label': FLAVOUR}\n",
        )
        loaded.append(spans.load_span_evaluator("picker", root))
    assert [ev.handler({}, None)["label"] for ev in loaded] == ["one", "two"]
    sys.modules.pop("flavour_helper", None)


def test_the_shared_folder_is_not_an_evaluator(custom):
    with pytest.raises(EvalkitError):
        spans.load_span_evaluator("_shared", custom)
    assert "_shared" not in span_evaluator_names(custom)


# --- the command line -----------------------------------------------------------------------------------


def evalkit_cli(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "evalkit", *args], cwd=cwd, capture_output=True, text=True, timeout=120
    )


def test_cli_packages_and_prints_what_went_in(tmp_path):
    done = evalkit_cli(
        "spans",
        "package",
        "stock_price_drift",
        "--custom-dir",
        str(CUSTOM),
        "--out",
        "drift.zip",
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    size = (tmp_path / "drift.zip").stat().st_size
    assert done.stdout.splitlines() == [
        f"Packaged stock_price_drift into drift.zip (3 files, {size:,} bytes):",
        f"  agentcore_spans.py     from {CUSTOM / '_shared' / 'agentcore_spans.py'}",
        f"  reference_prices.json  from {CUSTOM / 'stock_price_drift' / 'reference_prices.json'}",
        f"  stock_price_drift.py   from {CUSTOM / 'stock_price_drift' / 'stock_price_drift.py'}",
        "Handler: stock_price_drift.lambda_handler",
    ]
    pii = evalkit_cli(
        "spans", "package", "pii_leak", "--custom-dir", str(CUSTOM), "--out", "pii.zip", cwd=tmp_path
    )
    assert "Optional imports left out (a Lambda layer may provide them): presidio_analyzer" in pii.stdout


def test_cli_errors_exit_2_without_a_traceback(tmp_path):
    done = evalkit_cli(
        "spans", "package", "nope", "--custom-dir", str(CUSTOM), "--out", "x.zip", cwd=tmp_path
    )
    assert done.returncode == 2
    assert done.stderr == (
        f"Error: span evaluator 'nope' not found in {CUSTOM} "
        "(available: pii_leak, stock_price_drift, tool_response_schema, workflow_contract)\n"
    )
    assert not (tmp_path / "x.zip").exists()


def test_symbolic_links_leaving_the_evaluator_folder_are_refused_naming_them(custom, tmp_path):
    secret = tmp_path / "secret.txt"
    secret.write_text("root:x:0:0\n")
    (custom / "beta" / "passwd").symlink_to(secret)
    (custom / "beta" / "data").mkdir()
    (custom / "beta" / "data" / "up").symlink_to(custom / "alpha")
    (custom / "beta" / "inside.py").symlink_to(custom / "beta" / "beta.py")  # stays in the folder: zipped
    done = evalkit_cli(
        "spans", "package", "beta", "--custom-dir", str(custom), "--out", "b.zip", cwd=tmp_path
    )
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert done.stderr == (
        f"Error: cannot package 'beta': symbolic links leave the evaluator folder {custom / 'beta'}: "
        f"{custom / 'beta' / 'data' / 'up'} -> {custom / 'alpha'}, {custom / 'beta' / 'passwd'} -> {secret}; "
        "copy what the evaluator needs into the folder, or remove the links\n"
    )
    assert not (tmp_path / "b.zip").exists()
    (custom / "beta" / "passwd").unlink()
    (custom / "beta" / "data" / "up").unlink()
    assert sorted(plan_package("beta", custom).entries) == ["beta.py", "inside.py"]


def test_a_shared_module_linked_from_outside_the_shared_folder_is_refused(custom, tmp_path):
    elsewhere = write(tmp_path, "elsewhere/texts.py", "def clip(text):\n    return text\n")
    (custom / "_shared" / "texts.py").unlink()
    (custom / "_shared" / "texts.py").symlink_to(elsewhere)
    with pytest.raises(EvalkitError, match="symbolic links leave the evaluator folder") as caught:
        plan_package("alpha", custom)
    assert f"{custom / '_shared' / 'texts.py'} -> {elsewhere}" in str(caught.value)


def test_an_evaluator_name_past_agentcores_48_characters_is_refused_in_one_line(custom, tmp_path):
    name = "a" * 300
    done = evalkit_cli("spans", "package", name, "--custom-dir", str(custom), "--out", "x.zip", cwd=tmp_path)
    assert done.returncode == 2
    assert done.stderr == (
        "Error: evaluator name 'aaaaaaaaaaaaaaaaaaaa'... (300 characters) is too long: AgentCore evaluator "
        "names are at most 48 characters (a letter, then letters, digits or _); rename the folder\n"
    )
    write(custom, f"{'b' * 48}/{'b' * 48}.py", HANDLER)
    assert plan_package("b" * 48, custom).handler == f"{'b' * 48}.lambda_handler"
