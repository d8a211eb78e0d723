"""Third-party packages for a Lambda zip: a pinned requirements file, installed by pip for Lambda's Linux.

``bundled_requirements(path, runtime)`` reads the file (every requirement pinned with ``==``; an unpinned,
editable, URL or option line is refused, naming its line), then runs, in a temporary folder::

    python -m pip install --target DIR --platform manylinux2014_<arch> --platform manylinux_<glibc>_<arch>
        --implementation cp --python-version X.Y --only-binary=:all: --no-compile -r requirements.txt

so only pure-Python and manylinux wheels for the runtime's Python and architecture are taken (never a build
from source, never this machine's own wheels), and yields the folder with what pip installed. pip resolves
the requirements' own dependencies; they are listed in ``Bundle.installed`` (pin them in the file to freeze
them). pip reads its usual settings, so ``PIP_INDEX_URL``, ``PIP_FIND_LINKS`` and ``PIP_NO_INDEX`` choose
where the wheels come from (a wheelhouse, a mirror). ``--no-compile``: bytecode files carry install times,
and the zip must be the same bytes for the same wheels; Lambda compiles in memory at import.

The file is read as documents are (``evalkit.documents.json_input.read_limited``: a regular file only, never a
named pipe or a device such as ``/dev/zero``, and no larger than ``EVALKIT_MAX_DOCUMENT_BYTES``), once: pip is
given a copy of the bytes checked, never the path again.

``LambdaRuntime`` is the target: Python 3.12 on x86_64 unless told otherwise. Lambda's python3.12 and later
runtimes run on Amazon Linux 2023 (glibc 2.34), the earlier ones on Amazon Linux 2 (glibc 2.26): wheels up to
that manylinux level are accepted.

``RUNTIME_SDK`` names the modules every Lambda Python runtime already ships: the AWS SDK (``boto3``,
``botocore``) and their dependencies. An evaluator may import them without a requirements file (AWS's own
evaluators, such as the Comprehend one, do, and AWS's deploy scripts zip the handler alone); a requirements
file that pins them bundles its own copy, which Lambda then imports first.
"""

from __future__ import annotations

import contextlib
import os
import re
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from evalkit.documents.json_input import read_limited
from evalkit.errors import DocumentError, EvalkitError

ARCHITECTURES = {"x86_64": "x86_64", "arm64": "aarch64"}
DEFAULT_PYTHON = "3.12"
DEFAULT_ARCHITECTURE = "x86_64"
_PINNED = re.compile(
    r"(?P<name>[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?)\s*(?:\[[^\]]*\])?\s*"
    r"===?\s*(?P<version>[A-Za-z0-9][A-Za-z0-9.+!_-]*)\s*(?:;.*)?"
)
_HASH = re.compile(r"\s--hash[=\s]\S+")
HOW_TO_PICK = "pick another with --python 3.X and --architecture x86_64|arm64"
#: Top-level modules of the SDK the Lambda Python runtime ships: boto3, botocore, s3transfer, jmespath,
#: python-dateutil, urllib3, six.
RUNTIME_SDK = frozenset({"boto3", "botocore", "s3transfer", "jmespath", "dateutil", "urllib3", "six"})


@dataclass(frozen=True)
class LambdaRuntime:
    """The Lambda runtime a zip targets: ``python`` (``3.12``) and ``architecture`` (``x86_64``/``arm64``)."""

    python: str = DEFAULT_PYTHON
    architecture: str = DEFAULT_ARCHITECTURE

    def __post_init__(self):
        if not re.fullmatch(r"3\.\d{1,2}", str(self.python)):
            raise EvalkitError(f"Python version {self.python!r} is not 3.X (Lambda runtimes are python3.X)")
        if self.architecture not in ARCHITECTURES:
            raise EvalkitError(
                f"architecture {self.architecture!r} is not one of Lambda's: {', '.join(ARCHITECTURES)}"
            )

    @property
    def platforms(self) -> list[str]:
        """The ``--platform`` tags pip is given (manylinux2014 and the runtime's own glibc level)."""
        arch = ARCHITECTURES[self.architecture]
        glibc = "2_34" if int(self.python.split(".")[1]) >= 12 else "2_26"
        return [f"manylinux2014_{arch}", f"manylinux_{glibc}_{arch}"]

    def describe(self) -> str:
        return f"Lambda runtime python{self.python} on {self.architecture}"


@dataclass
class Bundle:
    """What pip installed: ``folder`` (the ``--target``), ``runtime``, ``requirements`` (the file's pins)
    and ``installed`` (every distribution, dependencies included, as ``name==version``)."""

    folder: Path
    runtime: LambdaRuntime
    requirements: list[str] = field(default_factory=list)
    installed: list[str] = field(default_factory=list)


def read_requirements(path: str | os.PathLike) -> str:
    """The text of the requirements file ``path``, read through the input checks of documents (module docs)."""
    source = Path(path)
    try:
        return read_limited(source, what="requirements file").decode("utf-8")
    except DocumentError as exc:
        message = str(exc)
        if message.endswith(": no such file"):
            raise EvalkitError(f"{source}: requirements file not found") from None
        message = message.replace("not a JSON requirements file", "not a requirements file")
        raise EvalkitError(f"cannot read the requirements file {message}") from None
    except UnicodeDecodeError as exc:
        raise EvalkitError(f"{source}: cannot read the requirements file ({exc})") from None


def read_pinned(path: str | os.PathLike, text: str | None = None) -> list[str]:
    """The requirements of ``path`` (or of its ``text``, already read), each ``name==version``; an error
    naming the first line that is not."""
    source = Path(path)
    if text is None:
        text = read_requirements(source)
    pins = []
    for number, line in _logical_lines(text):
        line = _HASH.sub("", f" {line}").strip()
        if not line:
            continue
        if not _PINNED.fullmatch(line):
            raise EvalkitError(
                f"{source} line {number}: {line[:120]!r} is not pinned: every requirement must be "
                "'name==version' (a Lambda zip must be the same on every build; options, -r, -e and URLs "
                "are not taken: give an index with PIP_INDEX_URL or PIP_FIND_LINKS)"
            )
        pins.append(line)
    if not pins:
        raise EvalkitError(f"{source}: the requirements file lists no requirement")
    return pins


def _logical_lines(text: str):
    """``(first line number, text)`` of each requirement, comments cut, ``\\`` continuations joined."""
    pending, start = "", 0
    for number, raw in enumerate(text.splitlines(), 1):
        line = re.sub(r"(^|\s)#.*", "", raw).rstrip()
        if not pending:
            start = number
        if line.endswith("\\"):
            pending += line[:-1] + " "
            continue
        yield start, pending + line
        pending = ""
    if pending:
        yield start, pending


@contextlib.contextmanager
def bundled_requirements(path: str | os.PathLike, runtime: LambdaRuntime):
    """Install the pinned requirements of ``path`` for ``runtime`` into a temporary folder; yield the
    ``Bundle`` (the folder is removed afterwards)."""
    text = read_requirements(path)
    pins = read_pinned(path, text)
    with tempfile.TemporaryDirectory(prefix="evalkit-lambda-") as temp:
        folder = Path(temp) / "site"
        checked = Path(temp) / "requirements.txt"
        checked.write_text(text, encoding="utf-8")
        _pip_install(checked, folder, runtime, shown=Path(path))
        yield Bundle(folder, runtime, pins, _installed(folder))


def pip_command(requirements: Path, folder: Path, runtime: LambdaRuntime) -> list[str]:
    """The pip command that installs ``requirements`` into ``folder`` for ``runtime``."""
    platforms = [arg for tag in runtime.platforms for arg in ("--platform", tag)]
    return [
        sys.executable,
        "-m",
        "pip",
        "install",
        "--target",
        str(folder),
        *platforms,
        "--implementation",
        "cp",
        "--python-version",
        runtime.python,
        "--only-binary=:all:",
        "--no-compile",
        "--disable-pip-version-check",
        "--no-input",
        "--quiet",
        "-r",
        str(requirements),
    ]


def _pip_install(
    requirements: Path, folder: Path, runtime: LambdaRuntime, *, shown: Path | None = None
) -> None:
    """pip installs ``requirements`` (the copy read; ``shown``, the user's file, is named in messages)."""
    command = pip_command(requirements, folder, runtime)
    requirements = shown or requirements
    try:
        done = subprocess.run(command, capture_output=True, text=True, stdin=subprocess.DEVNULL)
    except OSError as exc:
        raise EvalkitError(f"cannot run pip ({exc}); it is needed to bundle {requirements}") from None
    if "No module named pip" in done.stderr:
        raise EvalkitError(f"pip is not installed in {sys.executable} (python -m ensurepip installs it)")
    if done.returncode != 0:
        lines = [line for line in done.stderr.splitlines() if line.strip() and "is ignored" not in line]
        detail = "\n".join(lines[-8:]) or f"exit code {done.returncode}"
        raise EvalkitError(
            f"pip could not install {requirements} for {runtime.describe()} (only pure-Python and manylinux "
            f"wheels are taken; a package without such a wheel cannot go in the zip; {HOW_TO_PICK}):\n"
            f"{detail}"
        )


def _installed(folder: Path) -> list[str]:
    """``name==version`` of every distribution pip put in ``folder``, from its ``*.dist-info/METADATA``."""
    found = []
    for metadata in sorted(folder.glob("*.dist-info/METADATA")):
        fields = {}
        with metadata.open(encoding="utf-8", errors="replace") as handle:
            for line in handle:
                if not line.strip():
                    break
                key, _, value = line.partition(":")
                fields.setdefault(key.strip(), value.strip())
        found.append(f"{fields.get('Name', metadata.parent.name)}=={fields.get('Version', '?')}")
    return sorted(found, key=str.lower)
