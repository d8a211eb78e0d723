"""A synthetic labelled eval document whose human labels the heuristic judge gets wrong in a learnable way.

Why: an alignment test needs disagreements between the offline judge and "humans" that a guideline can fix, and
a benchmark needs labelled sets of any size. Each item asks for a fact about a topic; its response is one of:

* an answer that repeats the question's words (the heuristic judge scores it high, the humans 5);
* a refusal that repeats the question's words and then declines ("I cannot share ... please contact support"):
  the heuristic judge scores it high, the humans 1 (what a guideline such as ``When the response contains
  "cannot", the score is at most 1`` fixes, on held-out rows too);
* an off-topic answer (both score it low: the humans 1).

Deterministic for a seed (``random.Random(seed)``). Hand-made material: the bundled real labels are FeedbackQA's
(``data/feedbackqa``); this set exists to test the mechanism.

May import: the standard library.
"""

from __future__ import annotations

import random

__all__ = ["synthetic_labelled"]

_TOPICS = [
    ("parental leave", "policy"),
    ("expense report", "deadline"),
    ("laptop refresh", "cycle"),
    ("remote work", "allowance"),
    ("pension plan", "match"),
    ("travel booking", "tool"),
    ("security badge", "office"),
    ("annual review", "schedule"),
    ("training budget", "limit"),
    ("sick leave", "rule"),
    ("overtime pay", "rate"),
    ("holiday calendar", "region"),
]
_FACTS = [
    "twelve weeks",
    "the last Friday",
    "every three years",
    "a monthly stipend",
    "five percent",
    "the portal",
]


def synthetic_labelled(n: int = 60, *, seed: int = 0, evaluator: str = "Relevance") -> tuple[dict, dict]:
    """``(document, labels)``: an eval document of ``n`` items (each asking for ``evaluator``) and its labels file
    content (version 2, one 1-5 score per item)."""
    rng = random.Random(seed)
    items, labels = [], []
    for index in range(n):
        topic, aspect = _TOPICS[index % len(_TOPICS)]
        fact = rng.choice(_FACTS)
        case = f"(case {index})"  # makes every row's text unique, so a test can tell where a row's text went
        prompt = f"What is the {aspect} of the {topic} {case}?"
        kind = rng.choices(["answer", "refusal", "off"], weights=[5, 3, 2])[0]
        if kind == "answer":
            response, human = f"{case} The {aspect} of the {topic} is {fact}.", 5
        elif kind == "refusal":
            response, human = (
                f"{case} About the {aspect} of the {topic}: I cannot share that, please contact support.",
                1,
            )
        else:
            response, human = (
                f"{case} Our cafeteria serves {rng.choice(['soup', 'pasta', 'salads'])} on weekdays.",
                1,
            )
        items.append({"prompt": prompt, "response": response, "evaluators": {evaluator: {}}})
        labels.append(
            {
                "item": index,
                "turn": None,
                "evaluator": evaluator,
                "score": human,
                "verdict": None,
                "note": kind,
                "labeller": "synthetic",
                "at": "2026-01-01T00:00:00+00:00",
            }
        )
    document = {"schemaVersion": "1.11.0", "metadata": {"name": "synthetic labelled set"}, "items": items}
    return document, {"version": 2, "labels": labels}
