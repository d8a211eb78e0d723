"""A small deterministic HR assistant, so evalkit has a live agent to evaluate offline.

``answer(prompt, history)`` retrieves paragraphs of the markdown knowledge base in ``knowledge/`` by
keyword overlap (idf-weighted, section headings counting half), answers with the sentences that cover the
question's terms, cites them as ``[1]``, ``[2]`` and reports the search in the upstream
``Diagnostics.retrieval_executions`` shape. Follow-up turns ("And how many for part-time?") borrow the
terms of the earlier user turns they refer to. Stock and broker questions go to ``market.py``.

Every call emits OpenTelemetry spans through the global API (tracer ``evalkit.demo_agent``): one
``invoke_agent`` span with the answer in ``gen_ai.task.output`` and a ``gen_ai.choice`` event, and an
``execute_tool <name>`` child per tool call. The agent never installs a tracer provider (without one the
API does nothing) and never sets ``session.id``: the caller owns both.

Same inputs, same output: no randomness, no clock in the answer, no network.
"""

from __future__ import annotations

import importlib
import importlib.util
import json
import math
import re
import sys
from collections.abc import Callable
from functools import lru_cache
from pathlib import Path
from typing import NamedTuple

from opentelemetry import trace

HERE = Path(__file__).resolve().parent
KNOWLEDGE_DIR = HERE / "knowledge"
AGENT_NAME = "Contoso HR assistant"
CAPABILITY = "OneDriveAndSharePoint"
NOT_FOUND = "I could not find that in the Contoso HR knowledge base; please ask HR directly."
MAX_HITS = 5
MAX_SENTENCES = 2
MIN_COVERAGE = 0.5  # share of the question's term weight the best paragraph must cover to be used
HEADING_WEIGHT = 0.5

STOPWORDS = frozenset(
    """a about after all also am an and any are as at be been before being but by can could did do does
    doing for from get gets getting give go had has have how i if in into is it its just know let like long
    many me more much my need new next of often on or our please should show so some summarise summarize
    summary tell than that the their them then there these they this those to up us use want was we
    what when where which who whom why will with would you your find search look sharepoint onedrive""".split()
)
FOLLOW_UP_OPENERS = ("and ", "what about", "how about", "also ", "same for", "what if")
PRONOUNS = frozenset({"it", "that", "this", "these", "those", "them", "they"})
WORD = re.compile(r"[a-z0-9]+(?:['-][a-z0-9]+)*")
SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9])")


def _sibling(name: str):
    """``market`` next to this file: a package import, or a path import when loaded as a bare file."""
    if __package__:
        return importlib.import_module(f"{__package__}.{name}")
    module_name = f"_evalkit_demo_agent_{name}"
    if module_name not in sys.modules:
        spec = importlib.util.spec_from_file_location(module_name, HERE / f"{name}.py")
        module = importlib.util.module_from_spec(spec)
        sys.modules[module_name] = module
        spec.loader.exec_module(module)
    return sys.modules[module_name]


market = _sibling("market")


class Passage(NamedTuple):
    """One paragraph of a knowledge document, the unit of retrieval (a NamedTuple rather than a dataclass:
    it works even when this file is executed without being registered in ``sys.modules``)."""

    order: int
    title: str
    section: str
    source: str
    text: str
    terms: frozenset[str]
    heading_terms: frozenset[str]


def answer(prompt: str, history: list[dict] | None = None) -> dict:
    """Answer ``prompt`` (a user turn) given the earlier turns in ``history``.

    ``history`` holds chat messages (``{"role": "user" | "assistant", "content": ...}``) or turn records
    (``{"prompt": ..., "response": ...}``), oldest first. Returns ``response`` (with ``[n]`` markers),
    ``citations`` (``index``, ``text``, ``source``) and ``retrieval_executions`` (empty for market answers).
    """
    tracer = trace.get_tracer("evalkit.demo_agent")
    attributes = {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": AGENT_NAME}
    with tracer.start_as_current_span(f"invoke_agent {AGENT_NAME}", attributes=attributes) as span:
        span.add_event("gen_ai.user.message", {"content": prompt})
        call_tool = _tool_caller(tracer)
        if market.handles(prompt):
            result = {
                "response": market.answer(prompt, call_tool),
                "citations": [],
                "retrieval_executions": [],
            }
        else:
            result = _answer_hr(prompt, _user_turns(history or []), call_tool)
        span.set_attribute("gen_ai.task.output", result["response"])
        span.add_event("gen_ai.choice", {"index": 0, "finish_reason": "stop", "message": result["response"]})
    return result


def _tool_caller(tracer) -> Callable[[str, dict, Callable[[], str]], str]:
    """A ``call_tool(name, arguments, run)`` that runs ``run()`` inside an ``execute_tool`` span."""

    def call_tool(name: str, arguments: dict, run: Callable[[], str]) -> str:
        attributes = {
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": name,
            "gen_ai.tool.type": "function",
            "gen_ai.tool.call.arguments": json.dumps(arguments, sort_keys=True),
        }
        with tracer.start_as_current_span(f"execute_tool {name}", attributes=attributes) as span:
            output = run()
            span.set_attribute("gen_ai.tool.call.result", output)
        return output

    return call_tool


# --- HR answers ------------------------------------------------------------------------------------------


def _answer_hr(prompt: str, earlier_prompts: list[str], call_tool) -> dict:
    """Search the knowledge base (one ``search_knowledge`` tool call), then answer from the best hits.

    A follow-up adds the topic words of the earlier turns to the query at half the weight of its own, so
    the new words decide between paragraphs of the same topic. The answer must cover at least half of the
    question's own term weight; otherwise the agent says it found nothing rather than guess.
    """
    own = _terms(prompt)
    topic_words = _topic_words(earlier_prompts) if earlier_prompts and _is_follow_up(prompt, own) else []
    weights = {term: 2.0 if topic_words else 1.0 for term in own}
    for word in topic_words:
        weights.setdefault(_stem(word), 1.0)
    query = " ".join(dict.fromkeys(_surface_words(prompt) + topic_words))

    ranked: list[tuple[Passage, float]] = []

    def search() -> str:
        scored = rank(weights)
        ranked.extend(scored[:MAX_HITS])
        hits = [
            {"rank": i, "source": p.source, "section": p.section, "score": round(s, 4), "text": p.text}
            for i, (p, s) in enumerate(ranked, start=1)
        ]
        return json.dumps({"query": query, "total": len(scored), "hits": hits})

    found = json.loads(call_tool("search_knowledge", {"query": query}, search))
    execution = {
        "capability": CAPABILITY,
        "status": "success",
        "totalResultCount": found["total"],
        "queries": [{"queryString": query, "filterExpression": None}],
        "retrievalHits": [
            {"rank": hit["rank"], "webUrl": hit["source"], "extracts": [{"text": hit["text"]}]}
            for hit in found["hits"]
        ],
    }
    focus = set(own) or set(weights)
    if not ranked or _coverage(ranked[0][0], focus) < MIN_COVERAGE:
        return {"response": NOT_FOUND, "citations": [], "retrieval_executions": [execution]}
    sentences = _pick_sentences(ranked, weights, focus)
    parts, citations = [], []
    for index, (passage, sentence) in enumerate(sentences, start=1):
        parts.append(_with_marker(sentence, index))
        citations.append({"index": index, "text": sentence, "source": passage.source})
    return {"response": " ".join(parts), "citations": citations, "retrieval_executions": [execution]}


def rank(weights: dict[str, float]) -> list[tuple[Passage, float]]:
    """Passages with a positive score, best first: sum of query weight x idf over shared terms, a term
    found only in the headings counting ``HEADING_WEIGHT``; ties keep document order."""
    idf = _idf()
    scored = []
    for passage in _passages():
        score = 0.0
        for term, weight in weights.items():
            if term in passage.terms:
                score += weight * idf.get(term, 0.0)
            elif term in passage.heading_terms:
                score += HEADING_WEIGHT * weight * idf.get(term, 0.0)
        if score > 0:
            scored.append((passage, score))
    scored.sort(key=lambda item: (-item[1], item[0].order))
    return scored


def _coverage(passage: Passage, focus: set[str]) -> float:
    """Share of the idf weight of ``focus`` found in the passage text or headings (unknown terms count
    as the rarest), so a paragraph matching only a side word of the question is not passed off as the answer."""
    idf = _idf()
    rarest = math.log(1 + len(_passages()))
    total = sum(idf.get(term, rarest) for term in focus)
    covered = sum(idf.get(term, rarest) for term in focus if term in passage.terms | passage.heading_terms)
    return covered / total if total else 0.0


def _pick_sentences(ranked, weights: dict[str, float], focus: set[str]) -> list[tuple[Passage, str]]:
    """The best sentence of the top passage, then (up to ``MAX_SENTENCES``) sentences of relevant hits
    (coverage at least ``MIN_COVERAGE``) that add a question term not covered yet, best first."""
    idf = _idf()
    candidates = []
    for rank_no, (passage, _) in enumerate(ranked):
        if rank_no and _coverage(passage, focus) < MIN_COVERAGE:
            continue
        for position, sentence in enumerate(SENTENCE_END.split(passage.text)):
            terms = set(_terms(sentence))
            score = sum(weight * idf.get(term, 0.0) for term, weight in weights.items() if term in terms)
            candidates.append((rank_no, -score, position, passage, sentence, terms))
    first = min((c for c in candidates if c[0] == 0), key=lambda c: (c[1], c[2]))
    picked = [first]
    covered = first[5] & focus
    for candidate in sorted(candidates, key=lambda c: (c[1], c[0], c[2])):
        if len(picked) >= MAX_SENTENCES:
            break
        if candidate[1] < 0 and (candidate[5] & focus) - covered:
            picked.append(candidate)
            covered |= candidate[5] & focus
    return [(c[3], c[4]) for c in picked]


def _with_marker(sentence: str, index: int) -> str:
    """``sentence`` with `` [index]`` before its final punctuation."""
    body = sentence.rstrip()
    if body and body[-1] in ".!?":
        return f"{body[:-1]} [{index}]{body[-1]}"
    return f"{body} [{index}]."


# --- conversation ----------------------------------------------------------------------------------------


def _user_turns(history: list[dict]) -> list[str]:
    """The earlier user prompts, oldest first, from chat messages or turn records."""
    prompts = []
    for entry in history:
        if not isinstance(entry, dict):
            continue
        if entry.get("role") == "user" and isinstance(entry.get("content"), str):
            prompts.append(entry["content"])
        elif "role" not in entry and isinstance(entry.get("prompt"), str):
            prompts.append(entry["prompt"])
    return prompts


def _is_follow_up(prompt: str, own_terms: list[str]) -> bool:
    """A turn that leans on an earlier one: it opens like "And ...", points back with a pronoun, or has
    at most one content word of its own."""
    lowered = prompt.strip().lower()
    words = set(WORD.findall(lowered))
    return lowered.startswith(FOLLOW_UP_OPENERS) or bool(words & PRONOUNS) or len(own_terms) <= 1


def _topic_words(earlier_prompts: list[str]) -> list[str]:
    """Content words of the latest earlier prompt that stands on its own, plus the follow-ups after it."""
    words: list[str] = []
    for earlier in reversed(earlier_prompts):
        words = _surface_words(earlier) + words
        if not _is_follow_up(earlier, _terms(earlier)):
            break
    return list(dict.fromkeys(words))


# --- text ------------------------------------------------------------------------------------------------


def _surface_words(text: str) -> list[str]:
    """Content words of ``text`` as written (lower-cased, possessive ``'s`` dropped), in order."""
    words = []
    for word in WORD.findall(text.lower()):
        word = word[:-2] if word.endswith("'s") else word
        if word not in STOPWORDS and len(word) > 1:
            words.append(word)
    return list(dict.fromkeys(words))


def _terms(text: str) -> list[str]:
    """Stemmed content words of ``text``, each once, in order."""
    return list(dict.fromkeys(_stem(word) for word in _surface_words(text)))


def _stem(word: str) -> str:
    """A light plural stemmer: ``days`` -> ``day``, ``matches`` -> ``match``, ``policies`` -> ``policy``."""
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 4 and word.endswith(("ches", "shes", "sses", "xes")):
        return word[:-2]
    if len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is")):
        return word[:-1]
    return word


# --- knowledge base --------------------------------------------------------------------------------------


@lru_cache(maxsize=1)
def _passages() -> tuple[Passage, ...]:
    """Every paragraph of ``knowledge/*.md`` (front matter ``title`` and ``source``; ``#`` headings)."""
    passages: list[Passage] = []
    for path in sorted(KNOWLEDGE_DIR.glob("*.md")):
        meta, body = _front_matter(path.read_text(encoding="utf-8"))
        title = meta.get("title", path.stem)
        source = meta.get("source", path.name)
        section = title
        for block in re.split(r"\n\s*\n", body):
            text = " ".join(line.strip() for line in block.strip().splitlines())
            if not text:
                continue
            if text.startswith("#"):
                section = text.lstrip("#").strip() if text.startswith("## ") else section
                continue
            terms = frozenset(_terms(text))
            heading_terms = frozenset(_terms(f"{title} {section}")) - terms
            passages.append(Passage(len(passages), title, section, source, text, terms, heading_terms))
    return tuple(passages)


@lru_cache(maxsize=1)
def _idf() -> dict[str, float]:
    """log(1 + N / df) per term, over passage text and headings."""
    passages = _passages()
    df: dict[str, int] = {}
    for passage in passages:
        for term in passage.terms | passage.heading_terms:
            df[term] = df.get(term, 0) + 1
    return {term: math.log(1 + len(passages) / count) for term, count in df.items()}


def _front_matter(text: str) -> tuple[dict[str, str], str]:
    """(``key: value`` pairs between leading ``---`` lines, the rest of the text)."""
    match = re.match(r"---\n(.*?)\n---\n", text, re.S)
    if not match:
        return {}, text
    meta = {}
    for line in match.group(1).splitlines():
        key, sep, value = line.partition(":")
        if sep:
            meta[key.strip()] = value.strip()
    return meta, text[match.end() :]
