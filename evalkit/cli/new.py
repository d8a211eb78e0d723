"""``evalkit new NAME [--llm]``: scaffold a working custom evaluator folder."""

from __future__ import annotations


def register(subparsers) -> None:
    parser = subparsers.add_parser("new", help="scaffold a custom evaluator in custom-evaluators/NAME/")
    parser.add_argument("name", metavar="NAME", help="evaluator name: a letter, then letters, digits or _")
    parser.add_argument(
        "--llm",
        action="store_true",
        help="an LLM judge (.py wrapper + .prompty) that receives the prompt, the response, expected_response and "
        "context",
    )
    parser.add_argument(
        "--custom-dir",
        metavar="DIR",
        default="custom-evaluators",
        help="folder to create NAME/ in (default: custom-evaluators); a run finds it there only with the same "
        "--custom-dir, which replaces ./custom-evaluators",
    )
    parser.set_defaults(func=main)


def main(args) -> int:
    from evalkit.evaluators.scaffold import scaffold  # with the command only: importlib.resources, tempfile

    for path in scaffold(args.name, args.custom_dir, llm=args.llm):
        print(f"Created {path}")
    kind = "an LLM judge (needs a judge model configured)" if args.llm else "a code-only evaluator"
    print(f'Reference it as "{args.name}": {{}} in an evaluator map; it is {kind}.')
    return 0
