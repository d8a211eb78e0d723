"""What ``ModelServer`` answers: scripted replies (``Reply``) and the deterministic heuristic judge.

Why here: a test either scripts the answer (a ``Reply`` for full control: status, headers, delay, usage,
raw body, tool calls) or lets ``heuristic_judge`` answer. The heuristic judge reads the labelled fields of a
judge prompt (``extract_fields``), scores the response against them (``judge_score``) and answers in the
format the prompt asks for, so azure-ai-evaluation's prompt judges and evalkit's ``.prompty`` judges parse a
1-5 score from it, deterministically. The protocol (``evalkit.testing.protocol``) turns either into the wire
response.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from evalkit.testing.protocol import message_text

__all__ = [
    "Reply",
    "declared_shape",
    "extract_fields",
    "heuristic_judge",
    "judge_score",
    "rating_scale_answer",
]


@dataclass
class Reply:
    """One scripted answer, for full control over what the server sends back.

    ``content``: the assistant message text (a dict/list is JSON-encoded). For an error status it is the
    error message, or a dict merged over the error object (e.g. ``{"type": "insufficient_quota"}``).
    ``status``: HTTP status; anything but 200 is sent as ``{"error": {...}}`` in the OpenAI shape.
    ``headers``: extra response headers. ``delay``: seconds to wait before answering (on top of latency).
    ``prompt_tokens`` / ``completion_tokens``: usage to report; None means estimated.
    ``raw_body``: sent verbatim instead of any JSON (e.g. ``b"not json"``), with ``status``.
    ``tool_calls``: ``[{"name": ..., "arguments": {...} or "json"}]`` (or full OpenAI tool-call dicts);
    the finish reason becomes ``tool_calls``. ``retry_after``: seconds, sent as ``Retry-After`` and
    ``retry-after-ms``. ``finish_reason``: overrides "stop" / "tool_calls" (e.g. "length").
    """

    content: Any = None
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    raw_body: bytes | str | None = None
    tool_calls: list[dict] | None = None
    retry_after: float | None = None
    finish_reason: str | None = None


# The heuristic judge --------------------------------------------------------------------------------------
_STOPWORDS = frozenset(
    """a about above after again against all also am an and any are as at be because been before being below
    between both but by can could did do does doing down during each few for from further had has have having
    he her here hers him his how i if in into is it its itself just me more most my no nor not now of off on
    once only or other our ours out over own same she should so some such than that the their theirs them then
    there these they this those through to too under until up very was we were what when where which while who
    whom why will with would you your yours yourself role content assistant""".split()
)
_LABELS = {
    "query": (
        "query",
        "question",
        "user query",
        "user question",
        "conversation history",
        "conversation",
        "request",
        "user request",
        "prompt",
        "user prompt",
    ),
    "response": (
        "response",
        "answer",
        "predicted answer",
        "generated answer",
        "agent response",
        "assistant response",
        "tool calls to be evaluated",
        "tool calls",
    ),
    "ground_truth": (
        "ground truth",
        "correct answer",
        "expected answer",
        "expected response",
        "reference answer",
        "gold answer",
    ),
    "context": ("context", "contexts", "documents", "retrieved documents", "sources"),
    "other": ("tool definitions", "tool definition"),
}
_LABEL_ROLE = {label: role for role, labels in _LABELS.items() for label in labels}
_LABEL_LINE = re.compile(
    r"^\s*(?:[-*]\s+)?(?:\*\*|__)?(?P<label>[A-Za-z][A-Za-z _-]{0,40}?)(?:\*\*|__)?\s*:(?:\*\*|__)?[ \t]?(?P<rest>.*)$"
)
_HEADING = re.compile(r"^\s*(?P<hashes>#{1,6})\s+(?P<label>.*?)\s*#*\s*$")
_UNDERLINE = re.compile(r"^\s*(?:={3,}|-{3,})\s*$")
_DESCRIBES_LABEL = re.compile(r"^(?P<label>[A-Z][A-Z_ ]*[A-Z])\s+(?:is|are)\b")
_INSTRUCTION = re.compile(
    r"^\s*(?:your (?:output|answer|response|task)|expected output|output format|respond|reply|return|provide"
    r"|please)\b.*\b(?:json|score|format|output|rating|integer|keys)\b",
    re.IGNORECASE,
)
_DATA_SECTION = {"data", "input", "inputs"}


def _norm_label(label: str) -> str:
    return " ".join(label.replace("_", " ").replace("-", " ").lower().split())


def _data_region(lines: list[str]) -> list[str]:
    """The lines holding the data: after the last ``# Data``/``# Input`` heading (up to the next heading of
    the same or a higher level), or inside an underlined ``INPUT`` section, else all lines."""
    for i in range(len(lines) - 1, -1, -1):
        heading = _HEADING.match(lines[i])
        if heading and _norm_label(heading.group("label")) in _DATA_SECTION:
            level = len(heading.group("hashes"))
            end = len(lines)
            for j in range(i + 1, len(lines)):
                other = _HEADING.match(lines[j])
                if other and len(other.group("hashes")) <= level:
                    end = j
                    break
            return lines[i + 1 : end]
    for i in range(len(lines) - 2, -1, -1):
        if _norm_label(lines[i]) in _DATA_SECTION and _UNDERLINE.match(lines[i + 1]):
            end = len(lines)
            for j in range(i + 2, len(lines) - 1):
                if lines[j].strip() and _UNDERLINE.match(lines[j + 1]):
                    end = j
                    break
            return lines[i + 2 : end]
    return lines


def extract_fields(text: str) -> dict[str, str]:
    """The labelled fields of a judge prompt: ``query``, ``response``, ``ground_truth``, ``context``.

    A field starts at a line ``LABEL: value`` (also ``**Label:**``, ``- Label:``) or a markdown heading
    ``# Label`` and runs until the next label, heading, underlined heading, a line describing a label
    (``RESPONSE is ...``) or a line of output instructions (``Your output must be ... JSON``). Only the data
    region is read (see ``_data_region``); the last occurrence of a field wins, so few-shot examples
    before the data do not count.
    """
    lines = _data_region(text.splitlines())
    fields: dict[str, str] = {}
    role: str | None = None
    value: list[str] = []

    def close() -> None:
        if role is not None and role != "other":
            fields[role] = "\n".join(value).strip()

    for i, line in enumerate(lines):
        underlined = i + 1 < len(lines) and line.strip() and _UNDERLINE.match(lines[i + 1])
        heading = _HEADING.match(line)
        labelled = _LABEL_LINE.match(line)
        if heading or underlined:
            close()
            name = _norm_label(heading.group("label") if heading else line)
            role, value = _LABEL_ROLE.get(name), []
        elif labelled and _norm_label(labelled.group("label")) in _LABEL_ROLE:
            close()
            role, value = _LABEL_ROLE[_norm_label(labelled.group("label"))], [labelled.group("rest")]
        elif _UNDERLINE.match(line) and i > 0 and lines[i - 1].strip():
            continue
        elif role is not None:
            described = _DESCRIBES_LABEL.match(line)
            if (described and _norm_label(described.group("label")) in _LABEL_ROLE) or _INSTRUCTION.match(
                line
            ):
                close()
                role, value = None, []
            else:
                value.append(line)
    close()
    return fields


def _terms(text: str) -> set[str]:
    """Content words: lower-case alphanumeric runs (underscores split), minus stopwords, a plural "s" off."""
    words = set()
    for word in re.findall(r"[^\W_]+", text.lower()):
        if word in _STOPWORDS:
            continue
        if len(word) > 3 and word.endswith("s") and not word.endswith("ss"):
            word = word[:-1]
        words.add(word)
    return words


def judge_score(fields: Mapping[str, str]) -> tuple[int, str]:
    """The heuristic 1-5 score and its reason for extracted fields (the rule is on ``heuristic_judge``)."""
    if not fields:
        return 3, "No labelled query/response fields were found in the prompt; neutral score 3."
    response = _terms(fields.get("response", ""))
    if not response:
        return 1, "The response is empty (no content words); score 1."
    measures = {"ground_truth": "f1", "context": "precision", "query": "recall"}
    role = next((role for role in measures if _terms(fields.get(role, ""))), None)
    if role is None:
        return 3, "There is no reference (ground truth, context or query) to compare with; neutral score 3."
    reference, measure = _terms(fields[role]), measures[role]
    shared = len(reference & response)
    if measure == "recall":
        overlap = shared / len(reference)
        what = f"{shared} of {len(reference)} content words of the query appear in the response"
    elif measure == "precision":
        overlap = shared / len(response)
        what = f"{shared} of {len(response)} content words of the response appear in the context"
    else:
        precision, recall = shared / len(response), shared / len(reference)
        overlap = 2 * precision * recall / (precision + recall) if shared else 0.0
        what = f"the response and the ground truth share {shared} content words (F1 {overlap:.2f})"
    score = 1 + math.floor(4 * overlap + 0.5)
    return score, f"Heuristic judge: {what}, so the score is {score} of 5."


def _wanted_format(instructions: str, body: Mapping[str, Any]) -> str:
    response_format = body.get("response_format") or {}
    kind = response_format.get("type") if isinstance(response_format, Mapping) else None
    if "<S2>" in instructions:
        return "tags"
    if kind in ("json_object", "json_schema") or re.search(r"\bjson\b", instructions, re.IGNORECASE):
        return "json"
    if re.search(
        r"\b(?:single|only|just)\s+(?:an?\s+|the\s+|one\s+)?(?:integer|number|digit|score|rating)\b",
        instructions,
        re.IGNORECASE,
    ):
        return "number"
    return "text"


_SCALE_LINE = re.compile(r'^- "(?P<label>[^"]+)"')
_SECTION = re.compile(r"^#{1,6}\s+(?P<name>.+?)\s*$")


def rating_scale_answer(system: str, user: str) -> str | None:
    """The answer to an AgentCore-style LLM-as-judge span prompt (evalkit's ``LLMSpanEvaluator``), else None.

    Such a prompt lists its ``# Rating scale`` in the system message as ``- "Label": definition`` lines,
    worst first, and asks for ``{"explanation", "label"}``. The user message's ``# Conversation`` section
    gives the query (its last ``User:`` line); the response is the ``# Assistant response`` or ``# Tool call``
    section, else the conversation's ``Assistant:`` lines (a session). The 1-5 ``judge_score`` of the two
    picks the label at the same relative place on the scale: 1 the worst, 5 the best.
    """
    if "# Rating scale" not in system or '"label"' not in system:
        return None
    labels = [m.group("label") for m in map(_SCALE_LINE.match, system.splitlines()) if m]
    if not labels:
        return None
    sections: dict[str, list[str]] = {}
    current = None
    for line in user.splitlines():
        heading = _SECTION.match(line)
        if heading:
            current = _norm_label(heading.group("name"))
            sections[current] = []
        elif current is not None:
            sections[current].append(line)
    conversation = sections.get("conversation", [])
    users = [line[len("User:") :].strip() for line in conversation if line.startswith("User:")]
    answers = [line[len("Assistant:") :].strip() for line in conversation if line.startswith("Assistant:")]
    response = "\n".join(sections.get("assistant response") or sections.get("tool call") or answers).strip()
    fields = {"query": users[-1] if users else "\n".join(conversation), "response": response}
    if not sections:
        fields = extract_fields(user)
    score, reason = judge_score(fields)
    index = math.floor((score - 1) / 4 * (len(labels) - 1) + 0.5)
    return json.dumps({"explanation": reason, "label": labels[index]})


_OBJECT_START = re.compile(r'\{\s*"')
_SCHEMA_SAMPLES = {"integer": 0, "number": 0.0, "boolean": False, "array": [], "object": {}, "null": None}


def declared_shape(template: str, body: Mapping[str, Any]) -> dict | None:
    """The JSON object a prompt asks for, when it is not a score: the properties of a ``json_schema``
    ``response_format`` (each a sample of its type: its first ``enum`` value, 0, 0.0, false, a text), else the
    first JSON object its own words show (``Only provide a response of {"apology": 0} or {"apology": 1}``:
    ``{"apology": 0}``, the first example, deterministically). A ``.prompty``'s ``outputs:`` name the keys
    promptflow takes from the answer, and a prompt states them in its instructions; the server never sees
    the ``.prompty`` itself. None when the prompt shows no shape."""
    response_format = body.get("response_format")
    json_schema = response_format.get("json_schema") if isinstance(response_format, Mapping) else None
    schema = json_schema.get("schema") if isinstance(json_schema, Mapping) else None
    properties = schema.get("properties") if isinstance(schema, Mapping) else None
    if isinstance(properties, Mapping) and properties:
        return {key: _schema_sample(spec) for key, spec in properties.items()}
    decoder = json.JSONDecoder()
    for start in _OBJECT_START.finditer(template):
        try:
            value, _ = decoder.raw_decode(template, start.start())
        except ValueError:
            continue
        if isinstance(value, dict):
            return value
    return None


def _schema_sample(spec: Any) -> Any:
    if not isinstance(spec, Mapping):
        return "Test answer"
    if isinstance(spec.get("enum"), list) and spec["enum"]:
        return spec["enum"][0]
    kind = spec.get("type")
    kind = next((k for k in kind if k != "null"), "string") if isinstance(kind, list) else kind
    return _SCHEMA_SAMPLES.get(kind, "Test answer")


def heuristic_judge(request: Mapping[str, Any]) -> str:
    """Deterministic model answer for a chat-completions request (a ``server.requests`` record or a body).

    Fields: the last user message is searched for labelled fields (``extract_fields``): query
    (QUERY, CONVERSATION_HISTORY, CONVERSATION, question, # Request ...), response (RESPONSE, predicted
    answer, TOOL CALLS TO BE EVALUATED, # Answer ...), ground truth (correct answer, ground truth ...),
    context (CONTEXT ...); if it has none, all messages are searched.

    Score (1-5), from content-word sets (lower-cased words, stopwords dropped, a plural "s" stripped):
      * empty response -> 1; no fields found or no reference words -> 3;
      * with a ground truth (Similarity): F1 of the response and ground-truth words;
      * else with a context (Groundedness): share of response words found in the context;
      * else (Relevance, Coherence, ToolCallAccuracy, custom judges): share of query words in the response;
      * score = 1 + floor(4 * overlap + 0.5).

    AgentCore-style rating-scale prompts (``# Rating scale`` in the system message) are answered by
    ``rating_scale_answer``: ``{"explanation", "label"}`` with the label the score picks on the scale.

    Format, from the prompt (system + user text without the extracted field values) and ``response_format``:
      * asks for ``<S2>`` tags -> ``<S0>...</S0><S1>reason</S1><S2>N</S2>``;
      * JSON (``response_format`` json_object/json_schema, or "JSON" in the prompt) and "score" in the
        prompt -> ``{"reason", "score", "status": "completed"}`` when the prompt defines a ``status`` key
        (azure-ai-evaluation's judges), else ``{"score": N, "reason": ...}``; JSON without "score" -> the
        shape the prompt declares (``declared_shape``: promptflow's apology sample asks for
        ``{"apology": 0}`` or ``{"apology": 1}`` and its ``outputs:`` take ``apology``), else
        ``{"answer": <text answer>}``;
      * asks for a single integer/number/score -> ``"N"``;
      * otherwise a short plain-text answer naming the start of the last user message.
    """
    body = request.get("body", request) if isinstance(request, Mapping) else {}
    body = body if isinstance(body, Mapping) else {}
    messages = [m for m in body.get("messages") or [] if isinstance(m, Mapping)]
    system = "\n".join(
        message_text(m.get("content")) for m in messages if m.get("role") in ("system", "developer")
    )
    users = [message_text(m.get("content")) for m in messages if m.get("role") == "user"]
    last_user = users[-1] if users else ""
    scaled = rating_scale_answer(system, last_user)
    if scaled is not None:
        return scaled
    fields = extract_fields(last_user) or extract_fields(
        "\n".join(message_text(m.get("content")) for m in messages)
    )
    # The format is read from the prompt's own words, not from the data being judged.
    template = system + "\n" + "\n".join(users)
    for value in sorted(filter(None, fields.values()), key=len, reverse=True):
        template = template.replace(value, " ")
    wanted = _wanted_format(template, body)
    if wanted == "text":
        words = last_user.split()
        gist = " ".join(words[:12]) + (" ..." if len(words) > 12 else "")
        return f"This is a test answer from the evalkit model server to: {gist}" if gist else "Hello."
    schema = json.dumps(body.get("response_format") or "")
    if wanted == "json" and not re.search(r"\bscore\b", template + schema, re.IGNORECASE):
        gist = "Test answer to: " + " ".join(last_user.split()[:12])
        return json.dumps(declared_shape(template, body) or {"answer": gist})
    score, reason = judge_score(fields)
    if wanted == "tags":
        return f"<S0>Let's think step by step: {reason}</S0><S1>{reason}</S1><S2>{score}</S2>"
    if wanted == "number":
        return str(score)
    if re.search(r"[\"']?\bstatus\b[\"']?\s*:", template):
        return json.dumps(
            {"reason": f"Let's think step by step: {reason}", "score": score, "status": "completed"}
        )
    return json.dumps({"score": score, "reason": reason})
