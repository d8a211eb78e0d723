"""``evalkit new NAME [--llm]``: scaffold a working custom evaluator folder."""

from __future__ import annotations

from importlib import resources
from pathlib import Path

from ..errors import EvalkitError
from ..evaluators.registry import NAME_PATTERN, builtin_collision


def register(subparsers) -> None:
    parser = subparsers.add_parser("new", help="scaffold a custom evaluator in custom-evaluators/NAME/")
    parser.add_argument("name", metavar="NAME", help="evaluator name: a letter, then letters, digits or _")
    parser.add_argument("--llm", action="store_true", help="an LLM judge (.py wrapper + .prompty)")
    parser.add_argument("--custom-dir", metavar="DIR", default="custom-evaluators")
    parser.set_defaults(func=main)


def scaffold(name: str, custom_dir: str | Path = "custom-evaluators", *, llm: bool = False) -> list[Path]:
    """Create ``custom_dir/name/`` with a working evaluator; returns the files written."""
    if not NAME_PATTERN.match(name):
        raise EvalkitError(
            f"'{name}' is not a valid evaluator name: start with a letter, then letters, digits or _."
        )
    if name in _builtin_names() or builtin_collision(name):
        raise EvalkitError(
            f"'{name}' collides with a built-in evaluator name (compared case-insensitively); "
            f"choose a prefixed name such as 'domain_{name.lower()}'."
        )
    home = Path(custom_dir) / name
    if home.exists():
        raise EvalkitError(f"{home} already exists; choose another name or edit that evaluator.")
    class_name = "".join(part[:1].upper() + part[1:] for part in name.split("_") if part) + "Evaluator"
    templates = (
        [("llm.py.txt", f"{name}.py"), ("llm.prompty.txt", f"{name}.prompty")]
        if llm
        else [("code.py.txt", f"{name}.py")]
    )
    home.mkdir(parents=True)
    written = []
    for template, target in templates:
        text = resources.files("evalkit.scaffold").joinpath(template).read_text(encoding="utf-8")
        path = home / target
        path.write_text(text.format(name=name, class_name=class_name), encoding="utf-8")
        written.append(path)
    return written


def _builtin_names():
    from ..evaluators.registry import BUILTIN_NAMES

    return BUILTIN_NAMES


def main(args) -> int:
    for path in scaffold(args.name, args.custom_dir, llm=args.llm):
        print(f"Created {path}")
    kind = "an LLM judge (needs a judge model configured)" if args.llm else "a code-only evaluator"
    print(f'Reference it as "{args.name}": {{}} in an evaluator map; it is {kind}.')
    return 0
