"""``evalkit new NAME [--llm | --span [LEVEL]]``: scaffold a working custom evaluator folder."""

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
        "--span",
        nargs="?",
        const="SESSION",
        choices=("SESSION", "TRACE", "TOOL_CALL"),
        metavar="LEVEL",
        help="an AgentCore span evaluator (a Lambda handler for 'evalkit spans eval' and AWS Lambda) at LEVEL "
        "(SESSION, TRACE or TOOL_CALL; default SESSION), with events/sample.json to try it with "
        "'evalkit spans invoke NAME --event ...'",
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

    written = scaffold(args.name, args.custom_dir, llm=args.llm, span_level=args.span)
    for path in written:
        print(f"Created {path}")
    if args.span is not None:
        custom = "" if args.custom_dir == "custom-evaluators" else f" --custom-dir {args.custom_dir}"
        print(
            f"Try it: evalkit spans invoke {args.name}{custom} --event {written[-1]}\n"
            f"Run it over spans: evalkit spans eval SPANS --evaluator {args.name}{custom} --out results/{args.name}"
        )
        return 0
    kind = "an LLM judge (needs a judge model configured)" if args.llm else "a code-only evaluator"
    print(f'Reference it as "{args.name}": {{}} in an evaluator map; it is {kind}.')
    return 0
