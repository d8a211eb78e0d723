"""Where a span evaluator's Lambda handler lives: its file, its module name in the zip, its function.

On AWS Lambda the handler is configuration (``module.function``, e.g. ``lambda_function.handler``), so it is
here too: ``find_handler(name, folder, spec)`` with ``spec`` one of

* ``None``: the layouts found without configuration, looked for in this order: ``<name>/<name>.py``
  (evalkit's layout), then ``<name>/lambda_function.py`` (AWS's samples); in the first of those files that
  exists and defines one, the function ``lambda_handler`` (the default), else ``handler`` (AWS's CLI
  templates and SDK examples);
* ``"function"``: that function, in the files above;
* ``"module.function"``: exactly ``<name>/module.py`` (a dotted module is a file in a sub-folder,
  ``pkg.mod.fn`` is ``<name>/pkg/mod.py``), as Lambda's handler setting names it.

Nothing is imported: the functions are found by reading the module's top level with ``ast`` (a ``def``,
decorated or not, an assignment, or an import under the name), so packaging and the evaluator list agree
with loading. ``HandlerLocation.handler`` is the string Lambda's handler setting needs for the zip.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from pathlib import Path

from evalkit.errors import EvaluatorConfigError

#: The handler function Lambda's Python runtime is configured with by default in AWS's console.
DEFAULT_FUNCTION = "lambda_handler"
#: Functions looked for when none is configured, in order.
FUNCTIONS = (DEFAULT_FUNCTION, "handler")
#: The module AWS's samples and console put the handler in.
SAMPLE_MODULE = "lambda_function"
_SPEC = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*")
HOW_TO_CONFIGURE = (
    "name the handler as Lambda's handler setting does, 'module.function': handler='lambda_function.handler' "
    'in Python, {"handler": ...} in a document\'s evaluator options, --evaluator NAME@module.function or '
    "--handler module.function on the command line"
)


@dataclass(frozen=True)
class HandlerLocation:
    """A handler: ``path`` (the file), ``module`` (its dotted name at the zip root) and ``function``."""

    path: Path
    module: str
    function: str

    @property
    def handler(self) -> str:
        """Lambda's handler setting for the zip: ``module.function``."""
        return f"{self.module}.{self.function}"


def parse_spec(spec: object, who: str) -> tuple[str | None, str]:
    """``(module or None, function)`` of a handler setting, or an ``EvaluatorConfigError``."""
    if not isinstance(spec, str) or not _SPEC.fullmatch(spec):
        raise EvaluatorConfigError(
            f"{who}: handler {spec!r} is not 'function' or 'module.function' (e.g. 'lambda_function.handler')"
        )
    module, _, function = spec.rpartition(".")
    return module or None, function


def module_candidates(name: str) -> tuple[str, ...]:
    """The modules looked in when no module is configured, in order."""
    return (name, SAMPLE_MODULE) if name != SAMPLE_MODULE else (name,)


def find_handler(name: str, folder: Path, spec: str | None = None) -> HandlerLocation:
    """The handler of evaluator ``name`` in ``folder`` (see the module docstring), or an error naming the
    files and functions looked for and how to configure another."""
    who = f"span evaluator '{name}'"
    module, function = parse_spec(spec, who) if spec is not None else (None, None)
    modules = (module,) if module else module_candidates(name)
    functions = (function,) if function else FUNCTIONS
    files = [(m, folder.joinpath(*m.split(".")).with_suffix(".py")) for m in modules]
    present = [(m, p) for m, p in files if p.is_file()]
    for mod, path in present:
        defined = top_level_names(path, who)
        if defined is None:  # a syntax error: importing the file reports it with its line
            return HandlerLocation(path, mod, functions[0])
        for fn in functions:
            if fn in defined:
                return HandlerLocation(path, mod, fn)
    looked = " or ".join(str(p) for _, p in files)
    wanted = " or ".join(f"{fn}(event, context)" for fn in functions)
    if not present:
        raise EvaluatorConfigError(f"{who}: no {looked} (the handler's file); or {HOW_TO_CONFIGURE}")
    found = ", ".join(str(p) for _, p in present)
    raise EvaluatorConfigError(f"{who}: {found} defines no {wanted}; define it, or {HOW_TO_CONFIGURE}")


def discover(name: str, folder: Path) -> HandlerLocation | None:
    """``find_handler`` without configuration, None when the folder holds no handler (or does not parse)."""
    try:
        location = find_handler(name, folder)
    except EvaluatorConfigError:
        return None
    return location if top_level_names(location.path, name) is not None else None


def top_level_names(path: Path, who: str) -> set[str] | None:
    """The names the module at ``path`` binds at its top level (defs, assignments, imports); None when it
    has a syntax error (left for the import, or the packager, to report with its line)."""
    try:
        tree = ast.parse(path.read_bytes(), filename=str(path))
    except SyntaxError:
        return None
    except (OSError, ValueError) as exc:
        raise EvaluatorConfigError(f"{who}: cannot read {path}: {exc}") from None
    names: set[str] = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.Assign):
            names.update(t.id for t in node.targets if isinstance(t, ast.Name))
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update((alias.asname or alias.name).split(".")[0] for alias in node.names)
    return names
