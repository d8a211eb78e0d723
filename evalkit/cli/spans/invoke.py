"""``evalkit spans invoke NAME --event EVENT.json``: run a span evaluator's handler on a recorded AgentCore
event exactly as Lambda would, and print its response JSON: the local twin of ``aws lambda invoke``.

The event is what the service sends the Lambda (``evalkit.spans.lambdas.event_replay``). The handler runs in
a worker process of the runner (``evalkit.usercode``): the time limit kills its process group, processes it
starts are gone when the command ends, and ``os._exit`` / ``sys.exit`` / a signal is an ``EvaluatorCrashed``
exit 1. The response goes to standard output as JSON (Lambda's error object when the handler raised, timed
out or exited); what the handler printed goes to standard error under a heading, then what the response
means. Exit codes: 0 a valid evaluator response (a result, or an error response the evaluator chose to
return), 1 the call gave no valid response (it breaks the response contract, raised, timed out, exited or
returned what JSON cannot carry), 2 the event file or the evaluator cannot be used.
"""

from __future__ import annotations

import json
import sys

from evalkit.cli.run import parse_seconds
from evalkit.cli.spans.options import add_custom_dir

EPILOG = (
    "exit codes: 0 the handler returned a valid AgentCore evaluator response (label/value/explanation, or "
    "an errorCode it chose); 1 it did not: the response breaks the contract (InvalidEvaluatorResponse: e.g. "
    "no label, a value outside 0.0-1.0), the handler raised, timed out, exited (EvaluatorCrashed), or returned "
    "what JSON cannot carry; "
    "2 the event file or the evaluator cannot be used."
)


def register(commands) -> None:
    invoke = commands.add_parser(
        "invoke",
        help="run a span evaluator's handler on a recorded AgentCore Lambda event and print its response",
        description="Run custom-evaluators/NAME's Lambda handler on EVENT.json (the event AgentCore sends "
        "the Lambda: schemaVersion, evaluatorId, evaluatorName, evaluationLevel, evaluationInput.sessionSpans, "
        "evaluationReferenceInputs, evaluationTarget) as Lambda would: the JSON parsed afresh, a Lambda-like "
        "context with the time limit, the return value through JSON. Prints the response JSON on stdout "
        "(the local twin of 'aws lambda invoke') and says on stderr whether it is a valid evaluator response.",
        epilog=EPILOG,
    )
    invoke.add_argument(
        "name", metavar="NAME", help="span evaluator: custom-evaluators/NAME/ (NAME.py or lambda_function.py)"
    )
    invoke.add_argument(
        "--event", metavar="EVENT.json", required=True, help="recorded AgentCore Lambda event"
    )
    add_custom_dir(invoke)
    invoke.add_argument(
        "--handler",
        metavar="MODULE.FUNCTION",
        help="Lambda's handler setting, when it is not NAME.py or lambda_function.py with lambda_handler or "
        "handler (e.g. app.evaluate)",
    )
    invoke.add_argument(
        "--timeout",
        metavar="SECONDS",
        type=parse_seconds,
        default=300.0,
        help="the Lambda time limit of the call (default 300)",
    )
    invoke.set_defaults(func=main)


def main(args) -> int:
    from evalkit.documents.redaction import redact, redact_value
    from evalkit.spans.lambdas.event_replay import read_event, replay
    from evalkit.spans.lambdas.span_evaluator import load_span_evaluator

    event, text = read_event(args.event)
    evaluator = load_span_evaluator(args.name, args.custom_dir, handler=args.handler)
    if evaluator.level != event["evaluationLevel"]:
        print(
            f"Note: {args.name} declares level {evaluator.level}; the event is at {event['evaluationLevel']} "
            "(the handler gets the event as it is)",
            file=sys.stderr,
        )
    result = replay(evaluator, text, args.timeout)
    # the handler's response and exception text may quote a key: printed redacted (``documents.redaction``)
    print(json.dumps(redact_value(result.response), ensure_ascii=False, indent=2))
    sys.stdout.flush()
    _print_logs(evaluator.name, result.logs)
    handler = f"{evaluator.path.stem}.{evaluator.function}" if evaluator.path else evaluator.function
    if result.problem is not None:
        code = result.fields.get("errorCode")
        print(
            redact(f"Error: {handler} gave no valid evaluator response ({code}): {result.problem}"),
            file=sys.stderr,
        )
        return 1
    print(
        redact(f"{handler}: valid AgentCore evaluator response: {_verdict(result.fields)}"), file=sys.stderr
    )
    return 0


def _verdict(fields: dict) -> str:
    if "errorCode" in fields:
        return f"error {fields['errorCode']}: {fields['errorMessage']}"
    value = f", value {fields['value']:g}" if "value" in fields else ""
    return f"label {fields['label']!r}{value}"


def _print_logs(name: str, logs) -> None:
    """What the handler printed, on standard error under a heading (as Lambda keeps logs apart from the
    payload), its tail only (``usercode.output_tail``)."""
    if not logs.text and not logs.cut:
        return
    from evalkit.documents.redaction import redact
    from evalkit.errors import terminal_safe

    text = logs.shown()
    print(f"--- what {name} printed (standard output and standard error) ---", file=sys.stderr)
    print(terminal_safe(redact(text)), end="" if text.endswith("\n") else "\n", file=sys.stderr)
    print("--- end of output ---", file=sys.stderr)
