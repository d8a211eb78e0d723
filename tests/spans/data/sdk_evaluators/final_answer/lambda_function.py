"""A code-based evaluator written the way AWS's tutorial shows: AWS's SDK decorator, AWS's sample layout.

``lambda_function.py`` with ``handler``, decorated with ``bedrock_agentcore``'s
``@custom_code_based_evaluator()``, which parses the Lambda event into an ``EvaluatorInput`` and returns
``EvaluatorOutput.model_dump()`` (every key, ``errorCode`` and ``errorMessage`` null on a success).

At TRACE level it looks for the agent's answer in the target trace, in the forms agents emit it: the GenAI
``gen_ai.output.messages`` attribute, Strands' ``gen_ai.choice`` span event, OpenInference's
``llm.output_messages.N.message.content``, Traceloop's ``gen_ai.completion.N.content`` and ADOT event
records (``body.output.messages``). ANSWERED (1.0) when there is one; when the reference inputs give an
expected response, MATCHES_REFERENCE (1.0) or DIFFERS_FROM_REFERENCE (0.0) by whether the answer contains
its text; NO_ANSWER (0.0) when none is found. A call without a target trace is an error response.
"""

import json

from bedrock_agentcore.evaluation.custom_code_based_evaluators import (
    EvaluatorInput,
    EvaluatorOutput,
    custom_code_based_evaluator,
)

EVALUATION_LEVEL = "TRACE"


def _texts(value):
    """The text pieces of a message content in any of its JSON forms."""
    if isinstance(value, str):
        try:
            parsed = json.loads(value)
        except ValueError:
            return [value]
        return _texts(parsed) if isinstance(parsed, (list, dict)) else [value]
    if isinstance(value, list):
        return [t for item in value for t in _texts(item)]
    if isinstance(value, dict):
        for key in ("text", "content", "message"):
            if key in value:
                return _texts(value[key])
        return [t for part in value.get("parts", []) for t in _texts(part)]
    return []


def _answers(doc):
    """The assistant texts one span or event record of the trace carries."""
    attributes = doc.get("attributes") or {}
    found = []
    for message in json.loads(attributes.get("gen_ai.output.messages") or "[]"):
        if message.get("role") == "assistant":
            found += _texts(message.get("parts", []))
    for key, value in attributes.items():
        if key.startswith(("llm.output_messages.", "gen_ai.completion.")) and key.endswith(".content"):
            found += _texts(value)
    for event in doc.get("events") or []:
        if event.get("name") == "gen_ai.choice":
            found += _texts((event.get("attributes") or {}).get("message"))
    body = doc.get("body") if isinstance(doc.get("body"), dict) else {}
    for message in (body.get("output") or {}).get("messages") or []:
        if message.get("role") == "assistant":
            found += _texts(message.get("content"))
    return [text for text in found if text.strip()]


def _is_tool_span(doc):
    """A tool's span: its output is the tool's result, not the agent's answer."""
    attributes = doc.get("attributes") or {}
    return (
        attributes.get("gen_ai.operation.name") == "execute_tool"
        or attributes.get("traceloop.span.kind") == "tool"
        or attributes.get("openinference.span.kind") == "TOOL"
    )


@custom_code_based_evaluator()
def handler(input: EvaluatorInput, context) -> EvaluatorOutput:
    if input.target_trace_id is None:
        return EvaluatorOutput(errorCode="NoTargetTrace", errorMessage="final_answer runs at TRACE level")
    docs = [d for d in input.session_spans if d.get("traceId") == input.target_trace_id]
    answers = [text for d in docs if not _is_tool_span(d) for text in _answers(d)]
    if not answers:
        return EvaluatorOutput(value=0.0, label="NO_ANSWER", explanation=f"{len(docs)} spans, no answer")
    answer = answers[-1]
    expected = next(
        (r.expected_response_text for r in input.reference_inputs if r.expected_response_text), None
    )
    if expected is None:
        return EvaluatorOutput(value=1.0, label="ANSWERED", explanation=answer[:200])
    matches = expected.lower() in answer.lower()
    return EvaluatorOutput(
        value=1.0 if matches else 0.0,
        label="MATCHES_REFERENCE" if matches else "DIFFERS_FROM_REFERENCE",
        explanation=f"expected {expected!r}; answer: {answer[:200]}",
    )
