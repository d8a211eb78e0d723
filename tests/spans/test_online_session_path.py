"""The receiver's per-session path: a session read from its documents, no span frame, and a finish commit
that does not wait for the disk while span commits still do."""

from __future__ import annotations

from evalkit.spans.lambdas.payload import session_groups, session_spans
from evalkit.spans.online.store import Store
from evalkit.spans.reading.loading import from_documents


def _doc(trace: int, span: int, start: int, name: str = "chat", session: str | None = "s-1", **attrs) -> dict:
    attributes = dict(attrs)
    if session is not None:
        attributes["session.id"] = session
    return {
        "traceId": f"{trace:032x}",
        "spanId": f"{span:016x}",
        "name": name,
        "kind": "INTERNAL",
        "startTimeUnixNano": start,
        "endTimeUnixNano": start + 5,
        "attributes": attributes,
        "status": {"code": "UNSET"},
    }


def test_a_session_from_its_documents_equals_the_session_of_their_frame():
    docs = [
        _doc(1, 1, 30, "invoke_agent"),
        _doc(1, 2, 10, "execute_tool lookup"),  # a tool by its name
        _doc(
            2, 3, 20, "call", session=None, **{"gen_ai.tool.name": "search"}
        ),  # a tool; session by its trace
        _doc(2, 4, 20, "call", **{"traceloop.span.kind": "tool"}),  # a tool (Traceloop); same start: ties
        _doc(2, 5, 20, "chat", **{"gen_ai.tool.name": ""}),  # not a tool: a blank tool name
        _doc(3, 6, 5, "chat"),
    ]
    frame = from_documents(docs, "session s-1")
    frame.loc[frame["session_id"].isna(), "session_id"] = "s-1"  # what the receiver did before
    (expected,) = session_groups(frame, "s-1")
    got = session_spans("s-1", docs)
    assert got.id == expected.id == "s-1"
    assert [d["spanId"] for d in got.docs] == [d["spanId"] for d in expected.docs]
    assert got.docs == expected.docs
    assert got.trace_ids == expected.trace_ids
    assert got.traces == expected.traces == [f"{3:032x}", f"{1:032x}", f"{2:032x}"]
    assert (
        got.tools
        == expected.tools
        == [
            (f"{1:032x}", f"{2:016x}"),
            (f"{2:032x}", f"{3:016x}"),
            (f"{2:032x}", f"{4:016x}"),
        ]
    )
    for level in ("SESSION", "TRACE", "TOOL_CALL"):
        assert got.targets(level) == expected.targets(level)
    assert got.texts() == expected.texts()  # the payloads' span JSON, byte for byte


def _synchronous(store: Store) -> int:
    return store.db.execute("PRAGMA synchronous").fetchone()[0]


def test_finishing_a_session_commits_without_fsync_and_span_commits_keep_it(tmp_path):
    store = Store(tmp_path / "store")
    statements: list[str] = []
    store.db.set_trace_callback(statements.append)
    store.add_spans([_doc(1, 1, 10)], ["s-1"], lambda s: True)
    assert _synchronous(store) == 2  # FULL: an acknowledged span is on disk
    store.complete_idle(0, now=10**10)
    result = {"evaluatorName": "e", "context": {"spanContext": {"sessionId": "s-1"}}, "label": "PASS",
              "value": 1.0, "passed": True}  # fmt: skip
    statements.clear()
    assert store.finish("s-1", "evaluated", [result])
    assert statements.index("PRAGMA synchronous=NORMAL") < statements.index("BEGIN IMMEDIATE")
    assert statements.index("COMMIT") < statements.index("PRAGMA synchronous=FULL")
    assert _synchronous(store) == 2
    assert not store.finish("s-1", "evaluated", [result])  # no longer complete: rolled back
    assert _synchronous(store) == 2
    store.add_spans([_doc(1, 2, 11)], ["s-1"], lambda s: True)
    assert store.counts()["spans"] == 2
    store.close()
    reopened = Store(tmp_path / "store")  # what was committed is there
    assert reopened.db.execute("SELECT COUNT(*) FROM results").fetchone()[0] == 1
    reopened.close()
