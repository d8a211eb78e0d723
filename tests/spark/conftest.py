"""The Spark tests' shared pieces: one local[2] SparkSession for the whole run, and generated documents.

The session is small on purpose (2 cores, few shuffle partitions) and its Arrow batches are short (700 rows),
so that batches end in the middle of threads and the re-cutting at item boundaries is exercised.
"""

from __future__ import annotations

import os
import random
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
DEMO = REPO / "data" / "demo.json"
CUSTOM = REPO / "custom-evaluators"
BATCH_ROWS = 700


@pytest.fixture(scope="session")
def spark():
    """A local[2] SparkSession shared by every Spark test (starting the JVM takes seconds)."""
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    from evalkit.spark.session import get_session

    session = get_session(
        "local[2]",
        app_name="evalkit-tests",
        config={
            "spark.ui.enabled": "false",
            "spark.sql.shuffle.partitions": "4",
            "spark.default.parallelism": "2",
            "spark.sql.execution.arrow.maxRecordsPerBatch": str(BATCH_ROWS),
            "spark.driver.memory": "1g",
        },
    )
    yield session
    session.stop()


WORDS = (
    "vacation days policy laptop onboarding buddy manager approval remote work core hours benefits "
    "payroll badge parking expense report travel insurance training"
).split()


def generated_document(n: int = 20_000, seed: int = 7) -> dict:
    """A document of ``n`` items: single-turn items (every tenth a thread of 2-4 turns) with exact and
    partial answers, citations, missing responses and fields, per-item evaluator options and replace maps."""
    rng = random.Random(seed)

    def sentence(k: int) -> str:
        return " ".join(rng.choice(WORDS) for _ in range(k))

    def entry(i: int) -> dict:
        expected = sentence(rng.randint(4, 10))
        roll = rng.random()
        if roll < 0.3:
            response = expected
        elif roll < 0.55:
            response = expected.upper()
        elif roll < 0.8:
            response = " ".join(expected.split()[:3]) + " " + sentence(3)
        else:
            response = sentence(6) + " guarantee"
        if rng.random() < 0.4:
            response += " \u30101:0\u2020policy\u3011"
        case = {"prompt": f"Q{i}: {sentence(5)}?", "response": response, "expected_response": expected}
        roll = rng.random()
        if roll < 0.03:
            del case["response"]
        elif roll < 0.05:
            case["response"] = ""
        elif roll < 0.08:
            del case["expected_response"]
        roll = rng.random()
        if roll < 0.1:
            case["evaluators"] = {"ExactMatch": {"case_sensitive": False}}
        elif roll < 0.15:
            case["evaluators"] = {"PartialMatch": {"threshold": 0.8}}
            case["evaluators_mode"] = "replace"
        return case

    items = []
    for i in range(n):
        if i % 10 == 3:
            turns = [entry(i * 10 + t) for t in range(rng.randint(2, 4))]
            items.append({"name": f"thread {i}", "conversation_id": f"conv-{i}", "turns": turns})
        else:
            items.append(entry(i))
    return {
        "schemaVersion": "1.11.0",
        "metadata": {"name": f"generated {n}"},
        "default_evaluators": {
            "ExactMatch": {},
            "PartialMatch": {},
            "Citations": {},
            "forbidden_terms": {"options": {"terms": ["guarantee"]}},
        },
        "items": items,
    }


@pytest.fixture(scope="session")
def generated_path(tmp_path_factory) -> Path:
    """The generated 20,000-item document, written once."""
    import json

    path = tmp_path_factory.mktemp("generated") / "generated.json"
    path.write_text(json.dumps(generated_document()), encoding="utf-8")
    return path
