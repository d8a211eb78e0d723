"""The outputs of the online receiver: results.jsonl, metrics.jsonl (CloudWatch EMF), and pass-rate alarms.

* ``DIR/results.jsonl``: one OTel ``gen_ai.evaluation.result`` event per line;
* ``DIR/metrics.jsonl``: CloudWatch Embedded Metric Format, namespace ``Bedrock-AgentCore/Evaluations``,
  metric name = evaluator name, dimensions ``service.name``, ``label`` and (for results stamped with one)
  ``onlineEvaluationConfigId``, the online evaluation configuration, which result events carry as well.

Each line carries the result's ``sequence`` number (its row in the store); an export appends the results after
the last complete line, so after a crash it resumes without repeating or losing one (a torn last line is cut
off first). With a threshold, ``PassRateAlarm`` logs a warning (and, with a webhook, POSTs JSON) when an
evaluator's pass rate over its window drops below it, and fires again only after recovering.
"""

from __future__ import annotations

import json
import logging
import os
import time
import urllib.request
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evalkit.documents.json_input import JsonInputError, parse_json_text

if TYPE_CHECKING:
    from evalkit.spans.online.store import Store

log = logging.getLogger("evalkit.spans.online")

NAMESPACE = "Bedrock-AgentCore/Evaluations"
RESULTS_FILE = "results.jsonl"
METRICS_FILE = "metrics.jsonl"
#: AgentCore's dimension for the online evaluation configuration a result was produced under.
CONFIG_ID = "onlineEvaluationConfigId"

_dumps = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode


def export_results(folder: Path, store: Store, namespace: str) -> None:
    """Append the results not yet in results.jsonl / metrics.jsonl to them (resuming after a crash)."""
    renderers = ((RESULTS_FILE, result_event), (METRICS_FILE, lambda *row: metric_record(namespace, *row)))
    for name, render in renderers:
        path = folder / name
        last = last_sequence(path)
        rows = store.results_after(last)
        if not rows:
            continue
        lines = []
        for seq, timestamp, text in rows:
            try:
                entry = parse_json_text(text, limit=None)
            except JsonInputError as exc:  # a store written by hand or by another tool: not exported, said
                log.warning("result %s in the store is not exported: %s", seq, exc)
                continue
            record = render(seq, timestamp, entry)
            if record is not None:
                lines.append(_dumps(record) + "\n")
        with open(path, "a", encoding="utf-8") as handle:
            handle.write("".join(lines))
            handle.flush()
            os.fsync(handle.fileno())


def metric_record(namespace: str, seq: int, timestamp: float, entry: dict) -> dict | None:
    """One CloudWatch EMF record: the result's value as the metric named after its evaluator."""
    value = entry.get("value")
    if "errorCode" in entry or not isinstance(value, (int, float)):
        value = 1.0 if entry["passed"] else 0.0
    name = entry["evaluatorName"]
    ctx = entry["context"]["spanContext"]
    config_id = entry.get(CONFIG_ID)
    dimensions = ["service.name", "label"] + ([CONFIG_ID] if config_id is not None else [])
    record = {
        "_aws": {
            "Timestamp": int(timestamp * 1000),
            "CloudWatchMetrics": [
                {
                    "Namespace": namespace,
                    "Dimensions": [dimensions],
                    "Metrics": [{"Name": name, "Unit": "None"}],
                }
            ],
        },
        "service.name": entry.get("service") or "unknown",
        "label": entry.get("label") or entry.get("errorCode") or "ERROR",
        **({CONFIG_ID: config_id} if config_id is not None else {}),
        name: value,
        "session.id": ctx.get("sessionId"),
        "sequence": seq,
    }
    if "traceId" in ctx:
        record["trace_id"] = ctx["traceId"]
    return record


def result_event(seq: int, timestamp: float, entry: dict) -> dict:
    """The OTel ``gen_ai.evaluation.result`` event of one result entry."""
    ctx = entry["context"]["spanContext"]
    attributes: dict[str, Any] = {"gen_ai.evaluation.name": entry["evaluatorName"]}
    if "value" in entry:
        attributes["gen_ai.evaluation.score.value"] = entry["value"]
    if "label" in entry:
        attributes["gen_ai.evaluation.score.label"] = entry["label"]
    if "explanation" in entry:
        attributes["gen_ai.evaluation.explanation"] = entry["explanation"]
    if "errorCode" in entry:
        attributes["error.type"] = entry["errorCode"]
        attributes["gen_ai.evaluation.error.message"] = entry.get("errorMessage", "")
    attributes["gen_ai.evaluation.evaluator.id"] = entry["evaluatorId"]
    attributes["session.id"] = ctx["sessionId"]
    if "traceId" in ctx:
        attributes["trace_id"] = ctx["traceId"]
    if "spanId" in ctx:
        attributes["span_id"] = ctx["spanId"]
    attributes["service.name"] = entry.get("service") or "unknown"
    if entry.get(CONFIG_ID) is not None:
        attributes[CONFIG_ID] = entry[CONFIG_ID]
    return {
        "name": "gen_ai.evaluation.result",
        "attributes": attributes,
        "timestamp": int(timestamp * 1000),
        "sequence": seq,
    }


def last_sequence(path: Path) -> int:
    """The ``sequence`` of the last complete line of a JSONL export; a torn last line is cut off."""
    try:
        handle = open(path, "rb+")
    except FileNotFoundError:
        return 0
    with handle:
        size = handle.seek(0, os.SEEK_END)
        if not size:
            return 0
        chunk = min(size, 1 << 16)
        handle.seek(size - chunk)
        tail = handle.read(chunk)
        if not tail.endswith(b"\n"):
            cut = tail.rfind(b"\n")
            keep = size - chunk + cut + 1 if cut >= 0 else 0
            handle.truncate(keep)
            tail = tail[: cut + 1] if cut >= 0 else b""
        lines = tail.rstrip(b"\n").rsplit(b"\n", 1)
        try:
            return int(parse_json_text(lines[-1])["sequence"]) if lines[-1] else 0
        except (ValueError, KeyError, TypeError):
            return 0


class PassRateAlarm:
    """Fires when an evaluator's pass rate over ``window`` seconds drops below ``threshold``; ``fired`` lists them."""

    def __init__(self, threshold: float | None, window: float, webhook: str | None):
        self.threshold = threshold
        self.window = window
        self.webhook = webhook
        self.fired: list[dict] = []
        self._alarming: set[str] = set()

    def check(self, store: Store) -> None:
        if self.threshold is None:
            return
        now = time.time()
        for name, (ok, total) in store.pass_rates(now - self.window).items():
            rate = ok / total if total else 1.0
            if rate < self.threshold and name not in self._alarming:
                self._alarming.add(name)
                alarm = {
                    "alarm": "evalkit.online.pass_rate",
                    "state": "ALARM",
                    "evaluator": name,
                    "passRate": rate,
                    "passed": ok,
                    "results": total,
                    "threshold": self.threshold,
                    "windowSeconds": self.window,
                    "timestamp": int(now * 1000),
                }
                self.fired.append(alarm)
                log.warning(
                    "ALARM %s: pass rate %.1f%% (%d of %d) over the last %gs is below %.1f%%",
                    name, 100 * rate, ok, total, self.window, 100 * self.threshold,
                )  # fmt: skip
                if self.webhook:
                    _post(self.webhook, alarm)
            elif rate >= self.threshold and name in self._alarming:
                self._alarming.discard(name)
                log.warning("OK %s: pass rate %.1f%% is back above the threshold", name, 100 * rate)


def _post(url: str, payload: dict) -> None:
    request = urllib.request.Request(
        url, data=_dumps(payload).encode(), headers={"Content-Type": "application/json"}, method="POST"
    )
    try:
        with urllib.request.urlopen(request, timeout=5) as response:
            response.read()
    except OSError as exc:
        log.warning("alarm webhook %s failed: %s", url, exc)
