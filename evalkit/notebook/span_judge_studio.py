"""SpanJudgeStudio: edit, try on a span file and compare versions of an LLM-as-judge span evaluator.

The span counterpart of the ``.prompty`` studio: a custom LLM-as-judge span evaluator is one file,
``custom-evaluators/<name>/<name>.json`` (AgentCore's ``CreateEvaluator`` configuration: level,
instructions with placeholders, rating scale, model parameters; see ``evalkit.spans.llm_judges.custom_llm_judges``).

    studio = JudgeStudio("market_answer_quality", spans="data/agentcore_spans.jsonl")   # a SpanJudgeStudio
    studio.instructions = studio.instructions + "\\nPenalise any figure the tools did not return."
    studio.problems()          # the load-time checks: placeholders of the level, the rating scale ...
    studio.preview()           # the judge's messages for the first target
    studio.run()               # one version: label, value and explanation per session / trace / tool call
    studio.compare_versions()  # two versions side by side, per target
    studio.save()              # writes <name>.json

``Builtin.<Name>`` opens a built-in as the starting point of a new custom judge (named ``name=`` or
``<Name>_custom``): its level, instructions and scale are copied, nothing is written before ``save()``.
Runs go through ``evalkit.spans.evaluate_spans`` with a ``SpanJudges`` (the judge pool, the cache and the
model from the environment), exactly as ``evalkit spans eval`` runs the saved file.
"""

from __future__ import annotations

import copy
import difflib
import hashlib
import json
import time
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING

from evalkit.documents.files.atomic import atomic_write
from evalkit.documents.json_input import JsonInputError, parse_json, read_limited
from evalkit.errors import EvalkitError
from evalkit.spans import evaluate_spans, load, results_frame
from evalkit.spans.lambdas.payload import session_groups
from evalkit.spans.llm_judges.conversation import PLACEHOLDERS
from evalkit.spans.llm_judges.custom_llm_judges import llm_judge_from_config
from evalkit.spans.llm_judges.judge_runner import SpanJudges
from evalkit.spans.llm_judges.llm_evaluator import builtin_evaluator

if TYPE_CHECKING:
    import pandas as pd

#: What a new judge starts from: a TRACE judge on AgentCore's 1-5 numerical scale.
TEMPLATE = {
    "level": "TRACE",
    "evaluatorConfig": {
        "llmAsAJudge": {
            "instructions": (
                "Judge the assistant response of the current turn: does it do what the user asked?\n\n"
                "# Conversation\n{context}\n\n# Assistant response\n{assistant_turn}"
            ),
            "ratingScale": {
                "numerical": [
                    {"value": 1, "label": "Very Poor", "definition": "does not do what was asked"},
                    {"value": 2, "label": "Poor", "definition": "does little of what was asked"},
                    {"value": 3, "label": "Fair", "definition": "does part of what was asked"},
                    {"value": 4, "label": "Good", "definition": "does what was asked with small gaps"},
                    {"value": 5, "label": "Excellent", "definition": "does exactly what was asked"},
                ]
            },
        }
    },
}
KEYS = ("sessionId", "traceId", "spanId")


@dataclass(repr=False)
class SpanJudgeVersion:
    """One run: the exact configuration, when, and ``results`` (one row per target: ids, label, value,
    explanation, errorCode, errorMessage)."""

    number: int
    sha256: str
    timestamp: str
    config: dict
    results: pd.DataFrame
    seconds: float
    calls: int = 0
    cache_hits: int = 0
    note: str = ""

    def __repr__(self) -> str:
        judged = self.results["errorCode"].isna()
        mean = self.results.loc[judged, "value"].mean() if judged.any() else float("nan")
        return (
            f"<SpanJudgeVersion {self.number} ({self.sha256[:12]}): {len(self.results)} targets, "
            f"mean value {mean:.2f}, {int((~judged).sum())} errors, {self.calls} judge calls, "
            f"{self.cache_hits} cached>"
        )


class SpanJudgeStudio:
    """Edit, run and compare versions of the LLM-as-judge span evaluator ``name`` (see the module docs)."""

    def __init__(
        self,
        name: str,
        spans: pd.DataFrame | str | Path,
        *,
        custom_dir: str | Path = "custom-evaluators",
        model_config: dict | None = None,
        concurrency: int = 8,
        cache: bool = True,
        session: str | list[str] | None = None,
    ):
        self.custom_dir = Path(custom_dir)
        self.spans = spans if not isinstance(spans, (str, Path)) else load(spans)
        self.session = session
        self.model_config = model_config
        self.concurrency = concurrency
        self.cache = cache
        self.versions: list[SpanJudgeVersion] = []
        if name.startswith("Builtin."):
            self.name, self.config, self.is_new = self._from_builtin(name)
        else:
            self.name = name
            self.is_new, self.config = self._open()
        self._saved_sha = None if self.is_new else self.sha256

    # the draft -------------------------------------------------------------------------------------------

    @property
    def path(self) -> Path:
        return self.custom_dir / self.name / f"{self.name}.json"

    def _open(self) -> tuple[bool, dict]:
        if self.path.is_file():
            try:
                return False, parse_json(read_limited(self.path))
            except JsonInputError as exc:
                raise EvalkitError(f"{self.path}: not valid JSON ({exc}); fix or delete it") from None
        return True, copy.deepcopy(TEMPLATE)

    @staticmethod
    def _from_builtin(spec: str) -> tuple[str, dict, bool]:
        evaluator = builtin_evaluator(spec)
        scale = [{"label": p.label, "value": p.value, "definition": p.definition} for p in evaluator.scale]
        config = {
            "level": evaluator.level,
            "evaluatorConfig": {
                "llmAsAJudge": {"instructions": evaluator.instructions, "ratingScale": {"numerical": scale}}
            },
        }
        return f"{spec[len('Builtin.') :]}_custom", config, True

    @property
    def _judge(self) -> dict:
        return self.config.setdefault("evaluatorConfig", {}).setdefault("llmAsAJudge", {})

    @property
    def level(self) -> str:
        return self.config.get("level", "")

    @level.setter
    def level(self, value: str) -> None:
        self.config["level"] = value

    @property
    def instructions(self) -> str:
        return self._judge.get("instructions", "")

    @instructions.setter
    def instructions(self, text: str) -> None:
        self._judge["instructions"] = text

    @property
    def rating_scale(self) -> dict:
        return self._judge.get("ratingScale", {})

    @rating_scale.setter
    def rating_scale(self, scale: dict) -> None:
        self._judge["ratingScale"] = scale

    @property
    def sha256(self) -> str:
        return hashlib.sha256(json.dumps(self.config, sort_keys=True).encode()).hexdigest()

    @property
    def dirty(self) -> bool:
        return self.sha256 != self._saved_sha

    def placeholders(self) -> tuple[str, ...]:
        """The placeholders the current level defines (the instructions may use these only)."""
        return PLACEHOLDERS.get(str(self.level).upper(), ())

    def problems(self) -> list[str]:
        """What loading the file would refuse (empty when the draft is valid)."""
        try:
            self.evaluator()
        except EvalkitError as exc:
            return [str(exc).replace(f"{self.path}: ", "")]
        return []

    def evaluator(self):
        """The draft as an ``LLMSpanEvaluator``, checked as loading ``<name>.json`` checks it."""
        return llm_judge_from_config(self.name, self.config, str(self.path))

    def preview(self, index: int = 0) -> list[dict]:
        """The judge's chat messages for target ``index`` of the spans (sessions, traces or tool calls)."""
        from evalkit.spans.llm_judges.conversation import conversation, placeholders

        evaluator = self.evaluator()
        targets = [
            (group, target)
            for group in session_groups(self.spans, self.session)
            for target in group.targets(evaluator.level)
        ]
        if not targets:
            raise EvalkitError(f"the spans hold no {evaluator.level} target to preview")
        group, (trace_id, span_id) = targets[index]
        values = placeholders(conversation(group.id, group.docs), evaluator.level, trace_id, span_id)
        return evaluator.messages(values)

    # running and comparing -------------------------------------------------------------------------------

    def run(self, note: str = "") -> SpanJudgeVersion:
        """Judge every target of the spans with the draft; the version is kept in ``versions``."""
        evaluator = self.evaluator()
        judges = SpanJudges(self.model_config, concurrency=self.concurrency, cache=self.cache)
        started = time.perf_counter()
        try:
            entries = evaluate_spans(self.spans, [evaluator], session=self.session, judges=judges)
        finally:
            judges.close()
        frame = results_frame(entries).drop(columns=["evaluatorName", "level"])
        version = SpanJudgeVersion(
            number=len(self.versions) + 1,
            sha256=self.sha256,
            timestamp=datetime.now(timezone.utc).isoformat(timespec="seconds"),
            config=copy.deepcopy(self.config),
            results=frame,
            seconds=time.perf_counter() - started,
            calls=judges.pool.usage.requests,  # requests sent, retries included
            cache_hits=judges.pool.cache_hits,
            note=note,
        )
        self.versions.append(version)
        return version

    def version(self, ref: int | SpanJudgeVersion) -> SpanJudgeVersion:
        if isinstance(ref, SpanJudgeVersion):
            return ref
        if not self.versions:
            raise EvalkitError("no version yet: run() the judge first")
        if ref < 0:
            return self.versions[ref]
        for version in self.versions:
            if version.number == ref:
                return version
        raise EvalkitError(f"no version {ref}: versions are 1 to {len(self.versions)}")

    def compare_versions(
        self, a: int | SpanJudgeVersion = -2, b: int | SpanJudgeVersion = -1
    ) -> pd.DataFrame:
        """Per target, the label and value of versions ``a`` and ``b`` and whether the label changed."""
        va, vb = self.version(a), self.version(b)
        cols = ["label", "value"]
        left = va.results[list(KEYS) + cols].rename(columns={c: f"{c}_{va.number}" for c in cols})
        right = vb.results[list(KEYS) + cols].rename(columns={c: f"{c}_{vb.number}" for c in cols})
        merged = left.merge(right, on=list(KEYS), how="outer")
        merged["changed"] = merged[f"label_{va.number}"].ne(merged[f"label_{vb.number}"])
        return merged

    def diff(self, a: int | SpanJudgeVersion = -2, b: int | SpanJudgeVersion = -1) -> str:
        """A unified diff of the two versions' configurations."""
        va, vb = self.version(a), self.version(b)
        text = [json.dumps(v.config, indent=2, sort_keys=True).splitlines(keepends=True) for v in (va, vb)]
        return "".join(difflib.unified_diff(*text, f"version {va.number}", f"version {vb.number}"))

    def save(self) -> Path:
        """Write ``<name>.json`` (refused while ``problems()`` finds any)."""
        found = self.problems()
        if found:
            raise EvalkitError(f"{self.path}: not saved: {'; '.join(found)}")
        with atomic_write(self.path) as handle:
            handle.write(json.dumps(self.config, indent=2, ensure_ascii=False) + "\n")
        self.is_new, self._saved_sha = False, self.sha256
        return self.path

    def __repr__(self) -> str:
        state = "new" if self.is_new else ("unsaved changes" if self.dirty else "saved")
        return f"<SpanJudgeStudio {self.name!r} ({self.level}) in {self.custom_dir} ({state}), {len(self.versions)} version(s)>"
