"""One parser for untrusted JSON (issue 29): every ``json.load`` / ``json.loads`` in the package (and every use of
``json.JSONDecoder`` / ``raw_decode``) is in ``evalkit/documents/json_input.py`` or in the short allowlist
below, each entry with the reason it is not untrusted input.

Everything else that reads JSON text (documents, span files, attribute values such as
``gen_ai.output.messages``, event bodies, judge answers, batch output lines and journals, labels, the online
store's rows, HTTP bodies) goes through ``parse_json`` / ``parse_json_text`` / ``json_or_text`` / ``read_json``:
bounded size, depth and integer digits, finite numbers only, and ``RecursionError`` / ``OverflowError`` never
escape. A new ``json.loads`` fails this test until it uses the parser or is added here with its reason.
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "evalkit"
PARSER = "documents/json_input.py"

#: (module, function or ``<module>``) -> why it may parse JSON with the standard library directly.
ALLOWED = {
    # evalkit's own files, shipped inside the package
    ("documents/validation.py", "_validator"): "the eval-document JSON Schema shipped in the package",
    ("reporting/chart_specs.py", "*"): "the chart template shipped in the package (and its own JSON dump)",
    # JSON evalkit serialised itself in the same process, from values already read by the parser
    (
        "spans/evaluation.py",
        "_evaluate_one",
    ): "the payload payload_text just built with json.dumps, for an in-process call",
    ("spans/lambdas/payload.py", "build_payload"): "the payload payload_text just built with json.dumps",
    (
        "spans/lambdas/invocation.py",
        "read_response",
    ): "json.loads(json.dumps(response)): Lambda's marshalling",
    (
        "spans/lambdas/evaluator_workers.py",
        "*",
    ): "the frames evalkit's own worker process encodes with json.dumps",
    (
        "evaluators/custom/worker_process.py",
        "_loader",
    ): "the row ranges evalkit's own parent sends its worker with json.dumps",
    ("spans/llm_judges/ground_truth.py", "ground_truth"): "reference inputs payload.reference_groups dumped",
    ("spark/executor.py", "*"): "json.loads(json.dumps(tokens)): a plain copy of evalkit's own counters",
    ("spark/frames.py", "scored_table"): "the details column evalkit's executors serialised in the same job",
    (
        "spark/stream_executor.py",
        "*",
    ): "span documents this job serialised after reading them with the parser",
    ("spark/stream_sink.py", "*"): "result entries and part files this job wrote itself",
    ("spans/reading/json_stream.py", "*"): "raw_decode finds each value's extent; parse_json reads the value",
    # evalkit's own cache database: keys and values it wrote (a hand-edited cache is a miss, see cache.py)
    ("judges/cache.py", "*"): "the judge cache's rows, written by evalkit",
    # the model server for tests (evalkit.testing): it answers evalkit itself, never a user's input
    ("testing/protocol.py", "*"): "the test model server's request bodies",
    ("testing/rules.py", "*"): "the test model server's scripted rules",
    ("testing/panel.py", "*"): "the test model server's scripted answers",
    ("testing/batches.py", "*"): "the test model server's batch files",
    ("testing/answers.py", "*"): "the test model server reading the JSON example a judge prompt shows",
}

_NAMES = {"load", "loads", "JSONDecoder", "raw_decode", "read_json"}
#: Modules whose ``load(s)`` parse JSON: the standard library's, orjson (a dependency), the usual others, pandas.
_MODULES = {"json", "_json", "orjson", "_orjson", "ujson", "simplejson", "pd", "pandas"}


def _calls(tree: ast.AST):
    """``(function name, line, what)`` of every ``json.load(s)`` / ``JSONDecoder`` / ``raw_decode`` use (and
    ``orjson.loads``, ``pd.read_json`` ...), and of names imported from ``json`` under those names."""
    imported = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module == "json":
            imported |= {alias.asname or alias.name for alias in node.names if alias.name in _NAMES}
    found = []

    def visit(node: ast.AST, function: str) -> None:
        for child in ast.iter_child_nodes(node):
            name = function
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)) and function == "<module>":
                name = child.name
            if isinstance(child, ast.Attribute) and child.attr in _NAMES:
                base = child.value
                if child.attr == "raw_decode" or (isinstance(base, ast.Name) and base.id in _MODULES):
                    found.append((name, child.lineno, ast.unparse(child)))
            if isinstance(child, ast.Name) and child.id in imported:
                found.append((name, child.lineno, child.id))
            visit(child, name)

    visit(tree, "<module>")
    return found


def test_untrusted_json_is_parsed_only_by_json_input():
    unlisted, used = [], set()
    for path in sorted(PACKAGE.rglob("*.py")):
        module = path.relative_to(PACKAGE).as_posix()
        if module == PARSER:
            continue
        for function, line, what in _calls(ast.parse(path.read_text(encoding="utf-8"))):
            for key in ((module, function), (module, "*")):
                if key in ALLOWED:
                    used.add(key)
                    break
            else:
                unlisted.append(f"evalkit/{module}:{line} ({function}): {what}")
    assert not unlisted, (
        "JSON parsed outside evalkit/documents/json_input.py; use parse_json_text / json_or_text / read_json "
        "there (or, for JSON evalkit wrote itself, add it to ALLOWED with the reason):\n"
        + "\n".join(unlisted)
    )
    assert not set(ALLOWED) - used, (
        f"allowlist entries that no longer parse JSON: {sorted(set(ALLOWED) - used)}"
    )


def test_the_check_finds_every_form(tmp_path):
    source = (
        "import json\nfrom json import loads as L\n"
        "def f(t):\n    return json.loads(t), json.load(t), L(t), json.JSONDecoder().raw_decode(t)\n"
        "g = orjson.loads(b'1'), pd.read_json('x')\n"
    )
    assert [what for _, _, what in _calls(ast.parse(source))] == [
        "json.loads",
        "json.load",
        "L",
        "json.JSONDecoder().raw_decode",
        "json.JSONDecoder",
        "orjson.loads",
        "pd.read_json",
    ]
