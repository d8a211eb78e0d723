"""The package's layout holds: layers import downwards only, no import cycles, small modules, a short root.

Every ``import`` is read, including those inside functions (an import hidden in a function still makes the
two modules depend on each other) and those under ``if TYPE_CHECKING:`` (a type-only import is still a
dependency a reader has to follow).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "evalkit"

#: Layers from the bottom up; a module may import its own layer (without cycles) and the layers below it.
LAYERS = [
    "errors",
    "documents",
    "judges",
    "testing",
    "usercode",
    "spans",
    "evaluators",
    "agents",
    "engine",
    "analysis",
    "reporting",
    "spark",
    "notebook",
    "cli",
    "__main__",
    "__init__",
]
#: Layers inside ``evalkit.spans``, bottom up (its ``__init__`` re-exports lazily and is above them all).
SPANS_LAYERS = ["reading", "lambdas", "llm_judges", "evaluator_specs", "evaluation", "online", "datasets"]
#: Layers inside ``evalkit.cli``, bottom up; ``commands`` are the modules directly in ``cli/`` (one per command).
CLI_LAYERS = ["process", "arguments", "run_options", "commands", "spans"]
#: Layers inside ``evalkit.evaluators``, bottom up (a juror may be any evaluator, so juries sit on the registry).
EVALUATORS_LAYERS = ["base", "names", "deterministic", "llm_judges", "custom", "registry", "scaffold", "jury"]
#: Layers inside ``evalkit.engine``, bottom up (its ``__init__`` re-exports ``run``).
ENGINE_LAYERS = ["rows", "forked_parts", "run"]
INNER_LAYERS = {
    "spans": SPANS_LAYERS,
    "cli": CLI_LAYERS,
    "evaluators": EVALUATORS_LAYERS,
    "engine": ENGINE_LAYERS,
}
MAX_LINES = 500
MAX_ROOT_ENTRIES = 16  # 14 + spark (issue 13) + usercode (issue 29: one runner for user code)


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {_module_name(p): p for p in PACKAGE.rglob("*.py") if "__pycache__" not in p.parts}


def _imports(name: str, path: Path) -> set[str]:
    """evalkit modules that ``name`` imports, anywhere in its code."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    is_package = path.name == "__init__.py"
    found: set[str] = set()

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name.startswith("evalkit"))
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = name.split(".") if is_package else name.split(".")[:-1]
                anchor = anchor[: len(anchor) - (node.level - 1)]
                base = ".".join(anchor + ([base] if base else []))
            if base.startswith("evalkit"):
                for alias in node.names:
                    sub = f"{base}.{alias.name}"
                    found.add(sub if sub in MODULES else base)
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(tree)
    found.discard(name)
    return {m for m in found if m in MODULES}


GRAPH = {name: _imports(name, path) for name, path in MODULES.items()}


def _layer(module: str) -> int:
    parts = module.split(".")
    top = parts[1] if len(parts) > 1 else "__init__"
    return LAYERS.index(top)


def test_every_package_and_root_module_has_a_layer():
    tops = {m.split(".")[1] for m in MODULES if "." in m}
    assert tops <= set(LAYERS), f"add {sorted(tops - set(LAYERS))} to LAYERS (and to docs/architecture.md)"


def test_imports_point_down_the_layers():
    upward = sorted(
        f"{module} imports {target}"
        for module, targets in GRAPH.items()
        if module != "evalkit"
        for target in targets
        if target != "evalkit" and _layer(target) > _layer(module)
    )
    assert upward == []


def _inner(module: str) -> str:
    """The part of its subpackage a module is in: ``evalkit.spans.online.store`` -> ``online``; a module that
    sits directly in ``cli/`` is one command (``commands``)."""
    package, part = module.split(".")[1:3]
    if package == "cli" and not (PACKAGE / "cli" / part).is_dir():
        return "commands"
    return part


def _inner_modules(package: str) -> list[str]:
    return [m for m in MODULES if m.startswith(f"evalkit.{package}.")]


@pytest.mark.parametrize("package", sorted(INNER_LAYERS))
def test_every_inner_module_has_a_layer(package):
    layers = INNER_LAYERS[package]
    inner = {_inner(m) for m in _inner_modules(package)}
    assert inner <= set(layers), f"add {sorted(inner - set(layers))} to the layers of evalkit.{package}"


@pytest.mark.parametrize("package", sorted(INNER_LAYERS))
def test_subpackages_import_downwards_only(package):
    layers = INNER_LAYERS[package]
    upward = sorted(
        f"{module} imports {target}"
        for module in _inner_modules(package)
        for target in GRAPH[module]
        if target.startswith(f"evalkit.{package}.")
        and layers.index(_inner(target)) > layers.index(_inner(module))
    )
    assert upward == []


@pytest.mark.parametrize("package", ["spans", "cli", "evaluators"])
def test_subpackages_say_what_they_hold(package):
    inits = list((PACKAGE / package).glob("*/__init__.py"))
    assert inits, f"evalkit.{package} has no subpackages"
    for init in inits:
        doc = ast.get_docstring(ast.parse(init.read_text(encoding="utf-8")))
        assert doc and "may import" in doc.lower(), f"{init} needs a docstring saying what it may import"


def test_no_import_cycles():
    # Tarjan's strongly connected components; package __init__ files that only document are not edges.
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    cycles: list[list[str]] = []

    def connect(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in GRAPH[v]:
            if w == "evalkit":
                continue
            if w not in index:
                connect(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                cycles.append(sorted(component))

    for module in GRAPH:
        if module not in index:
            connect(module)
    assert cycles == []


@pytest.mark.parametrize("module", sorted(MODULES))
def test_module_is_at_most_500_lines(module):
    lines = len(MODULES[module].read_text(encoding="utf-8").splitlines())
    assert lines <= MAX_LINES, f"{MODULES[module]} has {lines} lines: split it by responsibility"


def test_package_root_is_short():
    entries = sorted(p.name for p in PACKAGE.iterdir() if p.name != "__pycache__")
    assert len(entries) <= MAX_ROOT_ENTRIES, entries


def test_every_subpackage_says_what_it_holds():
    for init in PACKAGE.glob("*/__init__.py"):
        doc = ast.get_docstring(ast.parse(init.read_text(encoding="utf-8")))
        assert doc and len(doc) > 40, f"{init} needs a docstring: what lives here, what it may import"
