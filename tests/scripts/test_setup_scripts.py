"""scripts/browser.sh, scripts/java.sh and scripts/setup.sh, run by bash with fake ``apt-get``, ``apt-cache``,
``java``, ``id`` and ``python3`` on a PATH of their own (nothing is installed for real): what they install and
why, the apt/dpkg lock wait, and the progress lines of a first install; exact output."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
#: The real programs the scripts use besides the fakes.
TOOLS = (
    "bash",
    "sed",
    "head",
    "cat",
    "sha256sum",
    "cut",
    "uname",
    "dirname",
    "env",
    "mkdir",
    "chmod",
    "cp",
    "sleep",
)


def sandbox(tmp_path: Path, *, root: bool = True, java: str | None = None, packages: str = "") -> dict:
    """A bin folder holding the real tools and the fakes, and the environment that puts only it on PATH."""
    bin_ = tmp_path / "bin"
    bin_.mkdir(parents=True)
    for tool in TOOLS:
        (bin_ / tool).symlink_to(shutil.which(tool))
    fakes = {
        "id": f"echo {0 if root else 1000}",
        # every call is logged; FAKE_APT_FAIL makes install fail as apt-get does when the lock stays held
        "apt-get": 'echo "apt-get $*" >> "$LOG"; case "$*" in *install*) [ -z "${FAKE_APT_FAIL:-}" ] || '
        '{ echo "E: Could not get lock /var/lib/dpkg/lock-frontend" >&2; exit 100; };; esac',
        "apt-cache": 'case " $FAKE_APT_PACKAGES " in *" $2 "*) exit 0;; esac; exit 100',
    }
    if java is not None:
        fakes["java"] = f"echo '{java}' >&2"
    for name, body in fakes.items():
        (bin_ / name).write_text(f"#!{shutil.which('bash')}\n{body}\n")
        (bin_ / name).chmod(0o755)
    return {
        "PATH": str(bin_),
        "LOG": str(tmp_path / "apt.log"),
        "FAKE_APT_PACKAGES": packages,
        "HOME": str(tmp_path),
    }


def script(name: str, env: dict, **extra: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [shutil.which("bash"), str(REPO / "scripts" / name)],
        env={**env, **extra},
        capture_output=True,
        text=True,
        timeout=30,
    )


def apt_calls(env: dict) -> list[str]:
    log = Path(env["LOG"])
    return log.read_text().splitlines() if log.exists() else []


def test_java_17_or_newer_is_left_alone(tmp_path):
    env = sandbox(tmp_path, java='openjdk version "17.0.15" 2025-04-15')
    done = script("java.sh", env)
    assert (done.returncode, done.stdout, done.stderr, apt_calls(env)) == (0, "", "", [])
    env21 = sandbox(tmp_path / "21", java='openjdk version "21.0.2" 2024-01-16')
    assert script("java.sh", env21).returncode == 0 and apt_calls(env21) == []


@pytest.mark.parametrize(
    ("java", "found"),
    [
        (None, "no java"),
        ('java version "1.8.0_351"', "Java 8"),
        ('openjdk version "11.0.20" 2023-07-18', "Java 11"),
    ],
)
def test_missing_or_old_java_is_installed_waiting_for_the_apt_lock(tmp_path, java, found):
    env = sandbox(tmp_path, java=java, packages="openjdk-17-jre-headless openjdk-21-jre-headless")
    done = script("java.sh", env)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == (
        f"Installing openjdk-17-jre-headless with apt-get: the Spark tests need Java 17 or newer (found {found}) "
        "(waits up to 300 s for another apt or dpkg process to finish)..."
    )
    assert lines[1].startswith("Installed openjdk-17-jre-headless in ") and lines[1].endswith(" s.")
    assert apt_calls(env) == [
        "apt-get -o DPkg::Lock::Timeout=300 update -qq",
        "apt-get -o DPkg::Lock::Timeout=300 install -y -qq openjdk-17-jre-headless",
    ]


def test_a_release_without_openjdk_17_gets_21(tmp_path):
    env = sandbox(tmp_path, packages="openjdk-21-jre-headless")
    done = script("java.sh", env, EVALKIT_APT_LOCK_TIMEOUT="60")
    assert done.returncode == 0
    assert apt_calls(env)[1] == "apt-get -o DPkg::Lock::Timeout=60 install -y -qq openjdk-21-jre-headless"


def test_without_root_the_command_to_run_is_printed(tmp_path):
    env = sandbox(tmp_path, root=False, packages="openjdk-17-jre-headless")
    done = script("java.sh", env)
    assert done.returncode == 3 and done.stdout == "" and apt_calls(env) == []
    assert done.stderr == (
        "openjdk-17-jre-headless missing: the Spark tests need Java 17 or newer (found no java). Install it with "
        "'sudo apt-get install -y openjdk-17-jre-headless' (Debian / Ubuntu), then run the command again.\n"
    )


def test_chromium_is_installed_when_missing_and_a_held_lock_fails_with_a_reason(tmp_path):
    env = sandbox(tmp_path)
    done = script("browser.sh", env)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[0] == (
        "Installing chromium with apt-get: the page tests drive headless Chromium (playwright cannot download a "
        "browser here) (waits up to 300 s for another apt or dpkg process to finish)..."
    )
    assert apt_calls(env)[-1] == "apt-get -o DPkg::Lock::Timeout=300 install -y -qq chromium"
    held = script("browser.sh", env, FAKE_APT_FAIL="1")
    assert held.returncode == 3
    assert held.stderr.splitlines() == [
        "E: Could not get lock /var/lib/dpkg/lock-frontend",
        "apt-get could not install chromium (see its message above; if another apt or dpkg process held the lock "
        "for more than 300 s, let it finish or set EVALKIT_APT_LOCK_TIMEOUT, then run the command again).",
    ]
    (tmp_path / "bin" / "chromium").symlink_to(shutil.which("bash"))
    again = script("browser.sh", env)
    assert (again.returncode, again.stdout) == (0, "")


FAKE_PYTHON = r"""#!BASH
# python3 -m venv .venv: make a .venv whose python answers pip like pip does (no network)
if [ "$1" = -m ] && [ "$2" = venv ]; then
  mkdir -p "$3/bin"; cp "$0" "$3/bin/python"; chmod +x "$3/bin/python"; exit 0
fi
case "$*" in
  *"-m pip install --progress-bar off"*)
    for i in $(seq 1 60); do echo "Collecting package$i>=1.0 (from evalkit==0.1.0)"; echo "  Using cached package$i-1.0.whl"; done
    echo "Installing collected packages: package1, package2, package3"
    sleep 1.3  # pip says nothing while it installs: the progress says it is still at it
    echo "Successfully installed package1-1.0 package2-1.0 package3-1.0";;
  *"-c"*) echo 3.11;;
esac
"""


def test_a_first_setup_prints_a_line_per_step_with_the_time(tmp_path):
    project = tmp_path / "project"
    (project / "scripts").mkdir(parents=True)
    for name in ("setup.sh", "progress.sh"):
        shutil.copy(REPO / "scripts" / name, project / "scripts" / name)
    for name in (
        "pyproject.toml",
        "constraints.txt",
        "tests/spans/data/sdk_evaluators/final_answer/requirements.txt",
    ):
        (project / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(REPO / name, project / name)
    env = sandbox(tmp_path)
    (tmp_path / "bin" / "seq").symlink_to(shutil.which("seq"))
    fake = tmp_path / "bin" / "python3"
    fake.write_text(FAKE_PYTHON.replace("BASH", shutil.which("bash")))
    fake.chmod(0o755)
    done = subprocess.run(
        [shutil.which("bash"), str(project / "scripts" / "setup.sh")],
        env={**env, "EVALKIT_PROGRESS_EVERY": "0.5"},
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    said = [line.split("] ", 1)[1] for line in done.stdout.splitlines()]
    ticks = said.count("  still installing")
    assert 1 <= ticks <= 3, said  # one a tick (0.5 s here) while the fake pip installs for 1.3 s
    assert [line for line in said if line != "  still installing"] == [
        "creating .venv with python3",
        "upgrading pip",
        "installing evalkit, its test tools and the Spark extra (the first time: about 5 minutes)",
        "  25 requirements collected (package25>=1.0)",
        "  50 requirements collected (package50>=1.0)",
        "  installing 3 packages (the longest part)",
        "  installed 3 packages",
        "downloading the wheels of the Lambda packaging test into .venv/wheelhouse",
        "set up (.venv is ready; 'source .venv/bin/activate' puts evalkit and papermill on your PATH)",
    ]
    assert all(line.startswith("[setup 0:0") for line in done.stdout.splitlines())  # m:ss since the start
    assert said.index("  still installing") == said.index("  installing 3 packages (the longest part)") + 1
    second = subprocess.run(
        [shutil.which("bash"), str(project / "scripts" / "setup.sh")], env=env, capture_output=True, text=True
    )
    assert (second.returncode, second.stdout) == (0, "")  # nothing changed: nothing to do, nothing said


def test_activating_the_venv_puts_the_readme_commands_on_path():
    """What setup.sh and demo.sh tell the user to do: ``source .venv/bin/activate``, then ``evalkit`` and
    ``papermill`` are found (here the venv running the tests, which setup.sh made)."""
    import sys

    activate = Path(sys.prefix) / "bin" / "activate"
    if not activate.is_file():
        pytest.fail(f"the tests do not run in a venv ({sys.prefix}): run them with bash scripts/test.sh")
    done = subprocess.run(
        [
            shutil.which("bash"),
            "-c",
            f'source "{activate}" && command -v evalkit papermill && evalkit --version',
        ],
        env={"PATH": "/usr/bin:/bin", "HOME": os.environ.get("HOME", "/tmp")},
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    found = done.stdout.splitlines()
    assert found[:2] == [
        str(Path(sys.prefix) / "bin" / "evalkit"),
        str(Path(sys.prefix) / "bin" / "papermill"),
    ]
    assert found[2].startswith("evalkit ")
    demo = (REPO / "scripts" / "demo.sh").read_text()
    assert "'source .venv/bin/activate' puts them on your PATH" in demo


def test_the_licence_is_the_spdx_string_setuptools_reads_without_a_warning():
    """Setup printed about 70 "`project.license` as a TOML table is deprecated" warnings (setuptools 77 on): the
    licence is the SPDX string, and the build backend is one that reads it (the venv's own setuptools may be
    older; pip builds evalkit with the one [build-system] asks for)."""
    import tomllib
    from packaging.requirements import Requirement
    from packaging.version import Version

    data = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    assert data["project"]["license"] == "MIT"
    backend = {Requirement(r).name: Requirement(r).specifier for r in data["build-system"]["requires"]}
    assert not backend["setuptools"].contains(Version("76.9")) and backend["setuptools"].contains(
        Version("77.0")
    )
    # setuptools refuses licence classifiers beside an SPDX expression
    assert not [c for c in data["project"].get("classifiers", []) if c.startswith("License ::")]
