"""No key leaves the process: `evalkit run` against endpoints whose 401s quote the key (as gateways do).

The judge's and the agent's keys are planted in the environment, credentials are put in the URLs' user
parts, and every file the run writes (results.json / .csv / report.html / spans.jsonl, the judge cache and
its -wal / -shm files), stdout and stderr (with promptflow's own log lines, at --log-level debug) are
searched for them.
"""

from __future__ import annotations

import base64
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from evalkit.testing import ModelServer

REPO = Path(__file__).resolve().parents[2]

JUDGE_KEY = "planted-judge-key-7c41d9e0"  # configured, not shaped like a key: found because it is configured
AGENT_KEY = "sk-plantedAGENTkey55e1b3"
JUDGE_URL_PASSWORD = "judge-url-pass-91f2"
AGENT_URL_PASSWORD = "agent-url-pass-3d8a"
BASIC = [
    base64.b64encode(f"{user}:{password}".encode()).decode()  # httpx sends URL credentials as Basic auth
    for user, password in (("judge-user", JUDGE_URL_PASSWORD), ("agent-user", AGENT_URL_PASSWORD))
]
SECRETS = (JUDGE_KEY, AGENT_KEY, JUDGE_URL_PASSWORD, AGENT_URL_PASSWORD, *BASIC)

DOCUMENT = {
    "schemaVersion": "1.0.0",
    "default_evaluators": {"Relevance": {}, "professional_tone": {}},
    "items": [
        {"prompt": "How many days of leave do I get?", "response": "You get 25 days of paid leave a year."},
        {"prompt": "Who approves leave?", "response": "Your line manager approves it in the HR portal."},
    ],
}


@pytest.fixture
def gateway():
    """A model server that wants another key and quotes the presented one in its 401."""
    with ModelServer(require_key="the-right-key-000000", echo_key=True) as server:
        yield server


@pytest.fixture
def project(tmp_path):
    (tmp_path / "doc.json").write_text(json.dumps(DOCUMENT))
    shutil.copytree(
        REPO / "custom-evaluators" / "professional_tone", tmp_path / "custom" / "professional_tone"
    )
    return tmp_path


def with_credentials(url: str, user: str, password: str) -> str:
    scheme, rest = url.split("://", 1)
    return f"{scheme}://{user}:{password}@{rest}"


def run_cli(project: Path, *args: str, env: dict) -> subprocess.CompletedProcess:
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "AZURE_", "AGENT_"))}
    return subprocess.run(
        [sys.executable, "-m", "evalkit", "run", "doc.json", "--out", "out", "--custom-dir", "custom",
         "--log-level", "debug", "--judge-timeout", "30", *args],
        cwd=project,
        env={**clean, "EVALKIT_CACHE_DIR": str(project / "cache"), **env},
        capture_output=True,
        text=True,
        timeout=180,
    )  # fmt: skip


def leaks(project: Path, proc: subprocess.CompletedProcess) -> dict[str, list[str]]:
    """Which secrets appear in which written file (bytes, so SQLite pages count too), stdout or stderr."""
    found = {}
    texts = {"stdout": proc.stdout.encode(), "stderr": proc.stderr.encode()}
    for path in project.rglob("*"):
        if path.is_file() and path.parent.name != "professional_tone":
            texts[str(path.relative_to(project))] = path.read_bytes()
    for name, data in texts.items():
        hits = [s for s in SECRETS if s.encode() in data]
        if hits:
            found[name] = hits
    return found


def test_a_judge_that_echoes_the_key_leaks_it_nowhere(gateway, project):
    env = {"OPENAI_BASE_URL": gateway.openai_base_url, "OPENAI_MODEL": "judge", "OPENAI_API_KEY": JUDGE_KEY}
    proc = run_cli(project, env=env)
    assert proc.returncode == 0, proc.stderr
    # The key reached the server and was quoted back, to both judges (built-in, and promptflow's prompty,
    # which also logs the error itself).
    items = json.loads((project / "out" / "results.json").read_text())["items"]
    for item in items:
        for key in ("relevance", "professional_tone"):
            assert item["scores"][key]["error"].endswith("HTTP 401: Incorrect API key provided: ***."), item
    assert {"results.json", "results.csv", "report.html"} <= {p.name for p in (project / "out").iterdir()}
    assert (project / "cache").is_dir()

    assert leaks(project, proc) == {}


def test_credentials_in_the_judge_url_are_shown_as_stars(gateway, project):
    url = with_credentials(gateway.openai_base_url, "judge-user", JUDGE_URL_PASSWORD)
    env = {"OPENAI_BASE_URL": url, "OPENAI_MODEL": "judge", "OPENAI_API_KEY": "the-right-key-000000"}
    proc = run_cli(project, env=env)
    assert proc.returncode == 0, proc.stderr
    items = json.loads((project / "out" / "results.json").read_text())["items"]
    # httpx turns the URL's user part into Basic auth, which the server quotes back
    assert items[0]["scores"]["relevance"]["error"].endswith("Incorrect API key provided: Basic ***")

    shown = f"http://***@127.0.0.1:{gateway.port}/v1"
    assert f"Judge: OpenAI-compatible {shown} model judge" in proc.stdout
    assert f"judge model: OpenAI-compatible {shown} model judge" in proc.stderr
    metadata = json.loads((project / "out" / "results.json").read_text())["metadata"]
    assert metadata["extensions"]["dev.evalkit.judge"]["model"] == f"OpenAI-compatible {shown} model judge"
    assert leaks(project, proc) == {}


@pytest.mark.parametrize("in_url", [False, True], ids=["key", "key-and-url-credentials"])
def test_an_agent_that_echoes_the_key_leaks_it_nowhere(gateway, project, in_url):
    agent = gateway.openai_base_url
    if in_url:
        agent = with_credentials(agent, "agent-user", AGENT_URL_PASSWORD)
    env = {"AGENT_API_KEY": AGENT_KEY, "OPENAI_BASE_URL": gateway.openai_base_url, "OPENAI_MODEL": "judge"}
    proc = run_cli(project, "--agent", agent + "#agent-model", env=env)
    assert proc.returncode == 0, proc.stderr
    items = json.loads((project / "out" / "results.json").read_text())["items"]
    assert [item["error"]["code"] for item in items] == ["agentAuthenticationError"] * 2
    quoted = "Basic ***" if in_url else "***."
    assert all(f"Incorrect API key provided: {quoted}" in item["error"]["message"] for item in items), items
    assert (project / "out" / "spans.jsonl").is_file()
    shown = f"http://{'***@' if in_url else ''}127.0.0.1:{gateway.port}/v1"
    assert f"agent: OpenAI-compatible {shown} model agent-model" in proc.stderr

    assert leaks(project, proc) == {}
