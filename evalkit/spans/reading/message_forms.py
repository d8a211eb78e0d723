"""Reading user prompts, assistant output, tool calls and tool definitions out of one span, in every form agents
emit them.

Instrumentations disagree on where a conversation lives in a span. This module knows the forms and their
order of precedence (the first form that gives text wins, per span):

user prompt (the last user message)
    1. ``gen_ai.input.messages`` attribute (GenAI semantic conventions 1.37+: ``[{"role", "parts": [{"type":
       "text", "content"}]}]``);
    2. ``gen_ai.user.message`` events (older GenAI conventions and Strands: attribute ``content``, text or a
       JSON list of ``{"text"}`` blocks);
    3. ``gen_ai.prompt`` attribute (text or JSON messages), then the indexed ``gen_ai.prompt.N.role`` /
       ``gen_ai.prompt.N.content`` (Traceloop / OpenLLMetry);
    4. OpenInference ``llm.input_messages.N.message.role`` / ``.content`` (or ``.contents.M.message_content.
       text``), then ``input.value``;
    5. Traceloop ``traceloop.entity.input`` (JSON with ``messages`` or ``inputs``, or text).

assistant output (the last assistant message)
    1. ``gen_ai.output.messages`` attribute; 2. ``gen_ai.choice`` events (attribute ``message``);
    3. ``gen_ai.completion`` attribute, then ``gen_ai.completion.N.content``; 4. ``gen_ai.task.output``;
    5. OpenInference ``llm.output_messages.N.message.*``, then ``output.value``;
    6. Traceloop ``traceloop.entity.output``.

tool call (on a tool span, as ``span_frame`` recognises one)
    arguments: ``gen_ai.tool.call.arguments``, a ``gen_ai.tool.message`` event's ``content`` (Strands),
    ``input.value`` (OpenInference), ``traceloop.entity.input``; result: the tool output attributes of
    ``span_frame.TOOL_OUTPUT_KEYS``, then a ``gen_ai.choice`` event on the tool span (Strands); id:
    ``gen_ai.tool.call.id``, else the ``gen_ai.tool.message`` event's ``id``.

tool definitions
    ``gen_ai.tool.definitions`` (JSON list, OpenAI ``{"type": "function", "function": {...}}`` or plain
    ``{"name", "description", "parameters"}``), Strands ``gen_ai.agent.tools`` (a JSON list of names),
    OpenInference ``llm.tools.N.tool.json_schema``, Traceloop ``llm.request.functions.N.name`` /
    ``.description`` / ``.parameters``, and the tool spans themselves (name, ``gen_ai.tool.description``).

Roles: ``user`` / ``human``, ``assistant`` / ``ai`` / ``model``; LangChain's ``[role, text]`` pairs and
serialised messages (``{"type": "human", "content"}``, ``{"kwargs": {...}}``) are read too.
"""

from __future__ import annotations

import json
import re
from typing import Any

from evalkit.spans.reading.span_frame import TOOL_OUTPUT_KEYS

_ROLES = {"user": "user", "human": "user", "assistant": "assistant", "ai": "assistant", "model": "assistant"}
_INDEXED = re.compile(r"^(?P<prefix>.+?)\.(?P<index>\d+)\.(?P<rest>.+)$")


# --- generic message reading ------------------------------------------------------------------------------


def parse_json(value: Any) -> Any:
    """A JSON-looking string parsed; anything else (or unparseable text) as it is."""
    if isinstance(value, str):
        text = value.strip()
        if text[:1] in ("[", "{"):
            try:
                return json.loads(text)
            except ValueError:
                return value
    return value


def content_text(content: Any) -> str | None:
    """The text of a message's content: a string, GenAI ``parts``, Bedrock/Strands ``{"text"}`` blocks, OpenAI
    ``{"type": "text", "text"}`` parts, OpenInference ``message_content``; None when there is no text."""
    content = parse_json(content)
    if isinstance(content, str):
        return content if content.strip() else None
    if isinstance(content, dict):
        for key in ("parts", "content", "contents"):
            if key in content:
                return content_text(content[key])
        for key in ("text", "message_content"):
            if key in content:
                return content_text(content[key])
        if "message" in content:
            return content_text(content["message"])
        return None
    if isinstance(content, list):
        texts = []
        for part in content:
            if isinstance(part, dict) and part.get("type") not in (None, "text"):
                continue  # tool calls, images, reasoning: not the message text
            text = content_text(part)
            if text is not None:
                texts.append(text)
        return "\n".join(texts) if texts else None
    return None


def messages_of(value: Any) -> list[tuple[str, str]]:
    """``[(role, text)]`` of a message list in any of the known shapes (roles normalised, text-less dropped)."""
    value = parse_json(value)
    if isinstance(value, dict):
        for key in ("messages", "inputs", "input", "outputs", "output"):
            if key in value:
                return messages_of(value[key])
        value = [value]
    if not isinstance(value, list):
        return []
    found = []
    for item in value:
        role, content = None, None
        if isinstance(item, (list, tuple)) and len(item) == 2 and isinstance(item[0], str):
            role, content = item
        elif isinstance(item, dict):
            body = item.get("kwargs") if isinstance(item.get("kwargs"), dict) else item
            role = body.get("role") or body.get("type") or item.get("role") or item.get("type")
            content = body.get("parts", body.get("content", body.get("text")))
        elif isinstance(item, list):
            found.extend(messages_of(item))
            continue
        role = _ROLES.get(str(role).lower()) if role is not None else None
        text = content_text(content)
        if role and text is not None:
            found.append((role, text))
    return found


def _last(messages: list[tuple[str, str]], role: str) -> str | None:
    for found_role, text in reversed(messages):
        if found_role == role:
            return text
    return None


def indexed(attrs: dict, prefix: str) -> list[dict]:
    """``prefix.N.rest`` attributes gathered into a list of ``{rest: value}`` in index order."""
    groups: dict[int, dict] = {}
    start = prefix + "."
    for key, value in attrs.items():
        if key.startswith(start):
            match = _INDEXED.match(key)
            if match and match.group("prefix") == prefix:
                groups.setdefault(int(match.group("index")), {})[match.group("rest")] = value
    return [groups[i] for i in sorted(groups)]


def _indexed_messages(attrs: dict, prefix: str, role_key: str, content_key: str) -> list[tuple[str, str]]:
    found = []
    for entry in indexed(attrs, prefix):
        role = _ROLES.get(str(entry.get(role_key, "")).lower())
        content = entry.get(content_key)
        if content is None:  # OpenInference multi-part: message.contents.M.message_content.text
            parts = indexed({k: v for k, v in entry.items()}, content_key + "s")
            content = [p.get("message_content.text") for p in parts if p.get("message_content.text")]
        text = content_text(content)
        if role and text is not None:
            found.append((role, text))
    return found


def _events(doc: dict, name: str, key: str) -> list[Any]:
    return [
        (event.get("attributes") or {}).get(key)
        for event in doc.get("events") or []
        if event.get("name") == name and (event.get("attributes") or {}).get(key) is not None
    ]


def _plain(value: Any, role: str) -> str | None:
    """A value that is either messages (take the last of ``role``) or the text itself."""
    messages = messages_of(value)
    if messages:
        return _last(messages, role)
    return content_text(value)


# --- per span ---------------------------------------------------------------------------------------------


def user_prompt(doc: dict) -> str | None:
    """The last user message a (non-tool) span carries, by the precedence in the module docstring."""
    attrs = doc.get("attributes") or {}
    if "gen_ai.input.messages" in attrs:
        text = _last(messages_of(attrs["gen_ai.input.messages"]), "user")
        if text is not None:
            return text
    events = [content_text(c) for c in _events(doc, "gen_ai.user.message", "content")]
    events = [t for t in events if t is not None]
    if events:
        return events[-1]
    if "gen_ai.prompt" in attrs:
        text = _plain(attrs["gen_ai.prompt"], "user")
        if text is not None:
            return text
    for prefix, role, content in (
        ("gen_ai.prompt", "role", "content"),
        ("llm.input_messages", "message.role", "message.content"),
    ):
        text = _last(_indexed_messages(attrs, prefix, role, content), "user")
        if text is not None:
            return text
    for key in ("input.value", "traceloop.entity.input"):
        if key in attrs:
            text = _plain(attrs[key], "user")
            if text is not None:
                return text
    return None


def assistant_output(doc: dict) -> str | None:
    """The last assistant message a (non-tool) span carries, by the precedence in the module docstring."""
    attrs = doc.get("attributes") or {}
    if "gen_ai.output.messages" in attrs:
        text = _last(messages_of(attrs["gen_ai.output.messages"]), "assistant")
        if text is None:
            text = content_text(attrs["gen_ai.output.messages"])
        if text is not None:
            return text
    events = [content_text(m) for m in _events(doc, "gen_ai.choice", "message")]
    events = [t for t in events if t is not None]
    if events:
        return events[-1]
    if "gen_ai.completion" in attrs:
        text = _plain(attrs["gen_ai.completion"], "assistant")
        if text is not None:
            return text
    completions = [content_text(e.get("content")) for e in indexed(attrs, "gen_ai.completion")]
    completions = [t for t in completions if t is not None]
    if completions:
        return completions[-1]
    if "gen_ai.task.output" in attrs:
        text = content_text(attrs["gen_ai.task.output"])
        if text is not None:
            return text
    messages = _indexed_messages(attrs, "llm.output_messages", "message.role", "message.content")
    text = _last(messages, "assistant")
    if text is not None:
        return text
    for key in ("output.value", "traceloop.entity.output"):
        if key in attrs:
            text = _plain(attrs[key], "assistant")
            if text is not None:
                return text
    return None


def tool_arguments(doc: dict) -> Any:
    """The arguments of the tool call a tool span records (parsed when JSON), or None."""
    attrs = doc.get("attributes") or {}
    if attrs.get("gen_ai.tool.call.arguments") is not None:
        return parse_json(attrs["gen_ai.tool.call.arguments"])
    events = _events(doc, "gen_ai.tool.message", "content")
    if events:
        return parse_json(events[-1])
    for key in ("input.value", "traceloop.entity.input"):
        if attrs.get(key) is not None:
            return parse_json(attrs[key])
    return None


def tool_result(doc: dict) -> str | None:
    """What the tool returned, as text."""
    attrs = doc.get("attributes") or {}
    for key in TOOL_OUTPUT_KEYS:
        value = attrs.get(key)
        if value is not None:
            text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
            if text.strip():
                return text
    events = [content_text(m) for m in _events(doc, "gen_ai.choice", "message")]
    events = [t for t in events if t is not None]
    return events[-1] if events else None


def tool_call_id(doc: dict) -> str | None:
    attrs = doc.get("attributes") or {}
    if attrs.get("gen_ai.tool.call.id"):
        return str(attrs["gen_ai.tool.call.id"])
    ids = _events(doc, "gen_ai.tool.message", "id")
    return str(ids[-1]) if ids else None


def tool_definitions(doc: dict) -> list[dict]:
    """The tools a span declares available: ``[{"name", "description"?, "parameters"?}]``."""
    attrs = doc.get("attributes") or {}
    found: list[dict] = []
    definitions = parse_json(attrs.get("gen_ai.tool.definitions"))
    if isinstance(definitions, list):
        found.extend(_definition(d) for d in definitions)
    names = parse_json(attrs.get("gen_ai.agent.tools"))
    if isinstance(names, list):
        found.extend({"name": n} if isinstance(n, str) else _definition(n) for n in names)
    for entry in indexed(attrs, "llm.tools"):
        found.append(_definition(parse_json(entry.get("tool.json_schema"))))
    for entry in indexed(attrs, "llm.request.functions"):
        found.append(
            _definition(
                {
                    "name": entry.get("name"),
                    "description": entry.get("description"),
                    "parameters": parse_json(entry.get("parameters")),
                }
            )
        )
    return [d for d in found if d.get("name")]


def _definition(value: Any) -> dict:
    if not isinstance(value, dict):
        return {}
    if isinstance(value.get("function"), dict):  # OpenAI {"type": "function", "function": {...}}
        value = value["function"]
    if isinstance(value.get("toolSpec"), dict):  # Bedrock Converse
        value = value["toolSpec"]
    definition = {"name": value.get("name")}
    if value.get("description"):
        definition["description"] = str(value["description"])
    parameters = value.get("parameters", value.get("inputSchema", value.get("input_schema")))
    if isinstance(parameters, dict) and isinstance(parameters.get("json"), dict):
        parameters = parameters["json"]
    if parameters:
        definition["parameters"] = parse_json(parameters)
    return definition
