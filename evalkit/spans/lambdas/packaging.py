"""Span evaluators as AWS Lambda deployment zips, and the shared modules they import.

``evalkit spans package NAME --out NAME.zip`` packs ``<custom_dir>/NAME/`` as the Lambda runtime wants it:
the handler's file at the zip root (``NAME.py`` or ``lambda_function.py``, ``handler_location``; the
handler string Lambda needs, e.g. ``NAME.lambda_handler`` or ``lambda_function.handler``, is
``Package.handler``), the folder's other files beside it (data such as ``reference_prices.json``), and the
shared modules of ``<custom_dir>/_shared/`` it imports (for the reference evaluators, ``agentcore_spans.py``),
found by reading imports with ``ast`` from the handler's file through the local and shared modules it
reaches, so only what is used goes in. Any other import must be the standard library or a third-party
package bundled from ``--requirements`` (``bundled_requirements``: its installed folder is passed as
``third_party``, and its files go in at the zip root), or the AWS SDK the Lambda Python runtime ships
(``RUNTIME_SDK``: boto3, botocore and their dependencies, left out of the zip and reported); anything else
would be missing on Lambda, so it is an error, unless it sits in ``try``/``except ImportError`` (an optional
dependency, e.g. from a Lambda layer), which is reported. The zip is deterministic (sorted entries, fixed
times and permissions): the same folder and the same wheels give the same bytes.
Folders whose name starts with ``_`` or ``.`` are never evaluators; ``_shared`` holds modules only.

Only the evaluator's own files go in: a symbolic link in its folder (or a shared module that is one) whose
target lies outside that folder (``passwd -> /etc/passwd``) is refused, naming every such link, so nothing
of the machine is zipped and shipped by accident. An evaluator's name follows AgentCore's rule for evaluator
names (``AGENTCORE_NAME``: a letter, then letters, digits and ``_``, at most 48 characters); a longer one is
refused in one line before any file is looked at.

Local runs see the same modules: ``shared_modules_importable`` puts ``<custom_dir>/_shared`` on ``sys.path``
(right after the evaluator's folder, so the folder's files win, as in the zip) while the evaluator module is
imported, then takes it off, as evalkit does with the evaluator's folder. The shared modules stay in
``sys.modules``, so names imported at module level keep working in the handler, but a shared module first
imported inside the handler is not found locally: import shared modules at the top of the file. A cached
shared module loaded from another custom folder's ``_shared`` is dropped first, so each evaluator runs with
the shared modules beside it.
"""

from __future__ import annotations

import ast
import contextlib
import io
import os
import re
import shutil
import sys
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

from evalkit.documents.files.atomic import atomic_write
from evalkit.errors import EvalkitError, EvaluatorConfigError
from evalkit.spans.lambdas.handler_location import HandlerLocation, discover, find_handler
from evalkit.spans.lambdas.requirements_bundle import RUNTIME_SDK, Bundle, LambdaRuntime, bundled_requirements

SHARED_FOLDER = "_shared"
#: AgentCore's CreateEvaluator ``evaluatorName`` for a custom evaluator (botocore's bedrock-agentcore-control
#: model: pattern ``[a-zA-Z][a-zA-Z0-9_]{0,47}``, at most 48 characters).
AGENTCORE_NAME = re.compile(r"[a-zA-Z][a-zA-Z0-9_]{0,47}")
AGENTCORE_NAME_MAX = 48
#: The earliest time a zip entry can carry; every entry gets it, so builds do not depend on file times.
ZIP_TIME = (1980, 1, 1, 0, 0, 0)
FILE_MODE = 0o100644
#: ``events/`` holds sample events to try a handler with (``evalkit new NAME --span``), as in AWS's SAM layout.
SKIPPED_DIRS = {"__pycache__", "events"}
SKIPPED_SUFFIXES = (".pyc", ".pyo")
#: ``except`` clauses that make the imports in their ``try`` optional.
IMPORT_GUARDS = {"ImportError", "ModuleNotFoundError", "Exception", "BaseException"}


@dataclass
class Package:
    """What ``build_package`` puts in the zip: ``entries`` maps the name in the zip to the source file."""

    name: str
    location: HandlerLocation | None = None
    entries: dict[str, Path] = field(default_factory=dict)
    shared: list[str] = field(default_factory=list)
    optional: list[str] = field(default_factory=list)
    #: The top-level modules imported from the bundled third-party packages.
    third_party: list[str] = field(default_factory=list)
    #: The top-level modules imported from the SDK the Lambda Python runtime ships (not in the zip).
    runtime_sdk: list[str] = field(default_factory=list)
    #: What ``--requirements`` bundled (the runtime targeted, the distributions installed), if anything.
    requirements: Bundle | None = None
    size: int = 0
    #: The bytes of its files once unzipped (Lambda allows 250 MB).
    unzipped: int = 0

    @property
    def handler(self) -> str:
        """Lambda's handler setting for this zip, ``module.function``."""
        return self.location.handler if self.location else f"{self.name}.lambda_handler"


def span_evaluator_names(custom_dir: str | os.PathLike | None = None) -> list[str]:
    """The evaluators of ``custom_dir`` that can be packaged: folders whose handler is found without
    configuration (``<name>.py`` or ``lambda_function.py`` defining ``lambda_handler`` or ``handler``)."""
    root = _root(custom_dir)
    if not root.is_dir():
        return []
    return [
        folder.name
        for folder in sorted(root.iterdir())
        if folder.is_dir() and folder.name[:1] not in ("_", ".") and discover(folder.name, folder) is not None
    ]


def plan_package(
    name: str,
    custom_dir: str | os.PathLike | None = None,
    *,
    handler: str | None = None,
    third_party: Path | None = None,
) -> Package:
    """The files of ``name``'s deployment zip, or an ``EvalkitError`` saying why it cannot be built.

    ``handler`` is Lambda's handler setting (``module.function``) when it is not found without
    configuration; ``third_party`` a folder of installed packages (``pip install --target``) to bundle.
    """
    root = _root(custom_dir)
    folder = root / str(name)
    package = Package(name, locate_handler(name, custom_dir, handler))
    sources = [s for s in sorted(folder.rglob("*")) if not _skipped(s.relative_to(folder))]
    _refuse_links_out(name, folder, sources)
    for source in sources:
        if source.is_file():
            package.entries[source.relative_to(folder).as_posix()] = source
    _follow_imports(package, folder, root / SHARED_FOLDER, third_party)
    if third_party is not None:
        _add_third_party(package, third_party)
    return package


def locate_handler(
    name: str, custom_dir: str | os.PathLike | None = None, handler: str | None = None
) -> HandlerLocation:
    """The handler of evaluator ``name`` to package, or an ``EvalkitError`` naming what was looked for."""
    root = _root(custom_dir)
    if isinstance(name, str) and len(name) > AGENTCORE_NAME_MAX:
        raise EvalkitError(
            f"evaluator name {name[:20]!r}... ({len(name)} characters) is too long: AgentCore evaluator names "
            f"are at most {AGENTCORE_NAME_MAX} characters (a letter, then letters, digits or _); rename the folder"
        )
    folder = root / str(name)
    if not isinstance(name, str) or not name.isidentifier() or name[0] == "_" or not folder.is_dir():
        available = span_evaluator_names(root)
        listing = f"available: {', '.join(available)}" if available else "there are no span evaluators there"
        raise EvalkitError(f"span evaluator '{name}' not found in {root} ({listing})")
    try:
        return find_handler(name, folder, handler)
    except EvaluatorConfigError as exc:
        raise EvalkitError(f"cannot package: {exc}") from None


def _refuse_links_out(name: str, folder: Path, sources: list[Path]) -> None:
    """Refuse the symbolic links among ``sources`` whose target is outside ``folder`` (module docs)."""
    home = folder.resolve()
    leaving = [s for s in sources if s.is_symlink() and not s.resolve().is_relative_to(home)]
    if leaving:
        links = ", ".join(f"{s} -> {os.readlink(s)}" for s in leaving)
        raise EvalkitError(
            f"cannot package '{name}': symbolic links leave the evaluator folder {folder}: {links}; copy what "
            "the evaluator needs into the folder, or remove the links"
        )


def _add_third_party(package: Package, installed: Path) -> None:
    """Every file pip installed into ``installed`` goes in at the zip root (its ``bin`` scripts left out:
    their first line names the interpreter of this machine); a clash with the evaluator's files is an error."""
    for source in sorted(installed.rglob("*")):
        relative = source.relative_to(installed)
        if not source.is_file() or relative.parts[0] == "bin" or _skipped(relative):
            continue
        arcname = relative.as_posix()
        if arcname in package.entries:
            raise EvalkitError(
                f"cannot package '{package.name}': {package.entries[arcname]} and the bundled requirements "
                f"both provide {arcname}; rename the evaluator's file"
            )
        package.entries[arcname] = source


def _resolvable(top: str, where: Path | None) -> bool:
    """A module or package named ``top`` is at the top of ``where`` (an extension module counts)."""
    if where is None:
        return False
    return (where / top).is_dir() or any(where.glob(f"{top}.py")) or any(where.glob(f"{top}.*.so"))


def _follow_imports(package: Package, folder: Path, shared: Path, third_party: Path | None = None) -> None:
    """Add the shared modules reached from the handler's file through local and shared modules to ``package``.

    A name resolves as on Lambda with the zip root first on the path: the standard library, then a module
    or package of the evaluator folder (already in the zip, but its imports are followed), then a shared
    module, then a bundled third-party package (its own imports are pip's business), then the runtime's own
    SDK (``RUNTIME_SDK``); an optional import that resolves to none of them is noted, any other is an error.
    """
    name = package.name
    scanned: set[Path] = set()
    todo = [(package.location.path, "." in package.location.module)]
    while todo:
        module, in_package = todo.pop()
        if module in scanned:
            continue
        scanned.add(module)
        for top, line, optional in _imports(_parse(module, name), module, in_package, name):
            if top == "__future__" or top in sys.stdlib_module_names:
                continue
            if (folder / f"{top}.py").is_file():
                todo.append((folder / f"{top}.py", False))
            elif (folder / top / "__init__.py").is_file():
                files = sorted((folder / top).rglob("*.py"))
                todo.extend((p, True) for p in files if not _skipped(p.relative_to(folder)))
            elif (shared / f"{top}.py").is_file():
                _refuse_links_out(name, shared, [shared / f"{top}.py"])
                if top not in package.shared:
                    package.shared.append(top)
                    package.entries[f"{top}.py"] = shared / f"{top}.py"
                todo.append((shared / f"{top}.py", False))
            elif _resolvable(top, third_party):
                if top not in package.third_party:
                    package.third_party.append(top)
            elif top in RUNTIME_SDK:
                if top not in package.runtime_sdk:
                    package.runtime_sdk.append(top)
            elif not optional:
                bundled = "" if third_party is None else ", nor in the bundled requirements"
                raise EvalkitError(
                    f"cannot package '{name}': {module} (line {line}) imports '{top}', which is neither the "
                    f"standard library nor a shared module in {shared}{bundled}, so the zip would not run on "
                    f"Lambda. List its distribution, pinned, in a requirements file (--requirements "
                    f"requirements.txt), put the module in {folder}, or import an optional dependency inside "
                    "try/except ImportError."
                )
            elif top not in package.optional:
                package.optional.append(top)
    package.shared.sort()
    package.optional.sort()
    package.third_party.sort()
    package.runtime_sdk.sort()


def build_package(
    name: str,
    out: str | os.PathLike,
    custom_dir: str | os.PathLike | None = None,
    *,
    handler: str | None = None,
    requirements: str | os.PathLike | None = None,
    runtime: LambdaRuntime | None = None,
) -> Package:
    """Write ``name``'s deployment zip to ``out`` (atomically) and return what went into it.

    With ``requirements`` (a pinned requirements file), its packages are installed by pip for ``runtime``
    (default: ``LambdaRuntime()``, Python 3.12 on x86_64) and bundled at the zip root.
    """
    target = Path(out)
    if target.is_dir():
        raise EvalkitError(
            f"output path {target} is a folder: give the zip file to write, e.g. {target / (name + '.zip')}"
        )
    sources = {_root(custom_dir) / str(name), _root(custom_dir) / SHARED_FOLDER}
    if any(target.resolve().is_relative_to(source.resolve()) for source in sources):
        raise EvalkitError(
            f"output path {target} is inside a folder being packaged; the next build would pack the zip "
            "into itself. Write it elsewhere."
        )
    if requirements is None:
        package = plan_package(name, custom_dir, handler=handler)
        _write_zip(package, target)
        return package
    locate_handler(name, custom_dir, handler)  # a missing handler is reported before pip runs
    with bundled_requirements(requirements, runtime or LambdaRuntime()) as bundle:
        package = plan_package(name, custom_dir, handler=handler, third_party=bundle.folder)
        package.requirements = bundle
        _write_zip(package, target)
    return package


def _write_zip(package: Package, target: Path) -> None:
    try:
        with atomic_write(target, "wb") as handle:
            write_zip(package, handle)
            package.size = handle.tell()
        package.unzipped = sum(path.stat().st_size for path in package.entries.values())
    except OSError as exc:
        raise EvalkitError(f"cannot write {target}: {exc.strerror or exc}") from None


def zip_bytes(package: Package) -> bytes:
    """The zip of ``package`` as bytes (see ``write_zip``)."""
    buffer = io.BytesIO()
    write_zip(package, buffer)
    return buffer.getvalue()


def write_zip(package: Package, handle) -> None:
    """Write the zip of ``package`` to ``handle``: entries sorted by name, fixed time and permissions,
    deflated, each file streamed (a bundled botocore is 80 MB of files)."""
    with zipfile.ZipFile(handle, "w") as archive:
        for arcname in sorted(package.entries):
            info = zipfile.ZipInfo(arcname, date_time=ZIP_TIME)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.create_system = 3  # Unix, so the permission bits below are honoured
            info.external_attr = FILE_MODE << 16
            with package.entries[arcname].open("rb") as source, archive.open(info, "w") as sink:
                shutil.copyfileobj(source, sink, 1 << 20)


@contextlib.contextmanager
def shared_modules_importable(evaluator_path: str | os.PathLike):
    """Make ``<custom_dir>/_shared`` importable while the evaluator at ``evaluator_path`` is imported."""
    evaluator_path = Path(evaluator_path)
    shared = evaluator_path.parent.parent / SHARED_FOLDER
    if not shared.is_dir():
        yield
        return
    _forget_other_copies(shared)
    entry = str(shared)
    own = str(evaluator_path.parent)
    sys.path.insert(sys.path.index(own) + 1 if own in sys.path else 0, entry)
    try:
        yield
    finally:
        with contextlib.suppress(ValueError):
            sys.path.remove(entry)


def _forget_other_copies(shared: Path) -> None:
    """Drop cached modules named like ``shared``'s modules but loaded from elsewhere (another _shared)."""
    here = shared.resolve()
    for module_file in shared.glob("*.py"):
        name = module_file.stem
        cached = sys.modules.get(name)
        origin = getattr(cached, "__file__", None)
        if cached is not None and name not in sys.stdlib_module_names and origin:
            if Path(origin).resolve().parent != here:
                del sys.modules[name]


def _root(custom_dir: str | os.PathLike | None) -> Path:
    return Path(custom_dir) if custom_dir is not None else Path.cwd() / "custom-evaluators"


def _skipped(relative: Path) -> bool:
    parts = relative.parts
    return any(part in SKIPPED_DIRS or part.startswith(".") for part in parts) or relative.name.endswith(
        SKIPPED_SUFFIXES
    )


def _parse(path: Path, name: str) -> ast.Module:
    try:
        return ast.parse(path.read_bytes(), filename=str(path))
    except SyntaxError as exc:
        raise EvalkitError(
            f"cannot package '{name}': {path} has a syntax error: {exc.msg} (line {exc.lineno})"
        ) from None
    except (OSError, ValueError) as exc:
        raise EvalkitError(f"cannot package '{name}': cannot read {path}: {exc}") from None


def _imports(tree: ast.Module, path: Path, in_package: bool, name: str) -> list[tuple[str, int, bool]]:
    """(top-level module, line, optional) of every import in ``tree``, ``if TYPE_CHECKING:`` blocks left out.

    Relative imports are resolved inside a package of the evaluator folder; at the root of the zip (the
    evaluator, its modules, the shared modules) they cannot work, so they are an error.
    """
    found: list[tuple[str, int, bool]] = []

    def visit(node: ast.AST, optional: bool) -> None:
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            for child in node.orelse:
                visit(child, optional)
            return
        if isinstance(node, ast.Try) and any(_guards_imports(h) for h in node.handlers):
            for child in node.body:
                visit(child, True)
            for child in node.handlers + node.orelse + node.finalbody:
                visit(child, optional)
            return
        if isinstance(node, ast.Import):
            found.extend((alias.name.split(".")[0], node.lineno, optional) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level and not in_package:
                raise EvalkitError(
                    f"cannot package '{name}': {path} (line {node.lineno}) uses a relative import, which "
                    "cannot work at the root of the zip; import the module by its name"
                )
            if not node.level:
                found.append(((node.module or "").split(".")[0], node.lineno, optional))
        for child in ast.iter_child_nodes(node):
            visit(child, optional)

    visit(tree, False)
    return found


def _guards_imports(handler: ast.ExceptHandler) -> bool:
    caught = handler.type
    if caught is None:
        return True
    names = caught.elts if isinstance(caught, ast.Tuple) else [caught]
    return any(isinstance(n, ast.Name) and n.id in IMPORT_GUARDS for n in names)


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )
