"""Message text in every shape instrumentations write it: content parts and blocks, message lists, indexed
attributes. The shared vocabulary of ``message_forms`` (spans) and ``record_content`` (event records).

``content_text`` finds the text of one message's content (a string, GenAI ``parts``, Bedrock/Strands
``{"text"}`` blocks, OpenAI ``{"type": "text", "text"}`` parts, OpenInference ``message_content``, ADOT's
``{"content": ...}`` / ``{"message": ...}`` wrappers); ``messages_of`` reads a message list into ``[(role,
text)]`` with the roles normalised (``user`` / ``human`` -> ``user``, ``assistant`` / ``ai`` / ``model`` ->
``assistant``; system, tool and unknown roles are dropped: they are neither the user's prompt nor the answer).
"""

from __future__ import annotations

import re
from typing import Any

from evalkit.documents.json_input import json_or_text

ROLES = {"user": "user", "human": "user", "assistant": "assistant", "ai": "assistant", "model": "assistant"}
_INDEXED = re.compile(r"^(?P<prefix>.+?)\.(?P<index>\d+)\.(?P<rest>.+)$")


def parse_json(value: Any) -> Any:
    """A JSON-looking string parsed by evalkit's one bounded parser; anything else (or text it refuses: not
    JSON, nested too deeply, NaN, ...) as it is (``json_input.json_or_text``)."""
    return json_or_text(value)


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
        role = ROLES.get(str(role).lower()) if role is not None else None
        text = content_text(content)
        if role and text is not None:
            found.append((role, text))
    return found


def last(messages: list[tuple[str, str]], role: str) -> str | None:
    """The text of the last message of ``role``, or None."""
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


def indexed_messages(attrs: dict, prefix: str, role_key: str, content_key: str) -> list[tuple[str, str]]:
    """``[(role, text)]`` of messages written as indexed attributes (``prefix.N.<role_key>`` / ``<content_key>``)."""
    found = []
    for entry in indexed(attrs, prefix):
        role = ROLES.get(str(entry.get(role_key, "")).lower())
        content = entry.get(content_key)
        if content is None:  # OpenInference multi-part: message.contents.M.message_content.text
            parts = indexed({k: v for k, v in entry.items()}, content_key + "s")
            content = [p.get("message_content.text") for p in parts if p.get("message_content.text")]
        text = content_text(content)
        if role and text is not None:
            found.append((role, text))
    return found


def plain(value: Any, role: str) -> str | None:
    """A value that is either messages (take the last of ``role``) or the text itself."""
    messages = messages_of(value)
    if messages:
        return last(messages, role)
    return content_text(value)
