"""The CI options of ``evalkit run`` and ``evalkit spans eval``: a Markdown summary, JUnit XML, the
regression gate.

- ``--summary-md FILE``: :func:`evalkit.reporting.ci_summary.summary_markdown` (for a PR comment or
  ``$GITHUB_STEP_SUMMARY``; write it to a file and append that, the job summary file is shared by the steps).
- ``--junit FILE``: :func:`evalkit.reporting.junit.write_junit`.
- ``--baseline DIR``: compare with that run in the summary and the JUnit file, without gating.
- ``--fail-on-regression BASELINE_DIR``: the same comparison, and exit 1 when some evaluator's pass rate
  dropped significantly (:mod:`evalkit.analysis.regression_gate`); the line printed names the evaluator, the
  test and its level. Noise does not fail it. A gate that could test no evaluator (none in both runs, or none
  with enough paired rows, as against a run of another document) is an error, exit 2: it never passes.

The comparison's notices (different documents, few shared rows, verdicts made differently) are printed on
stderr as ``evalkit compare`` prints them, not only written into the summary.
- ``--report-url URL``: where report.html will be (an artifact's address) for the summary's link.

The baseline is read before the evaluation, so a missing or wrong folder costs no judge calls and a baseline
that is also ``--out`` is read before it is replaced. For ``run`` the baseline is a run folder; for ``spans
eval`` another ``spans eval --out`` folder (:mod:`evalkit.analysis.span_runs`).
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from evalkit.cli.arguments.paths import output_file
from evalkit.errors import EvalkitError

__all__ = ["CiOutputs", "add_options", "prepare"]


def add_options(parser) -> None:
    """Add the CI options to a ``run`` or ``spans eval`` parser."""
    group = parser.add_argument_group("CI outputs")
    group.add_argument(
        "--summary-md",
        metavar="FILE",
        type=output_file,
        help="also write a Markdown summary (PR comment, job summary)",
    )
    group.add_argument(
        "--junit",
        metavar="FILE",
        type=output_file,
        help="also write JUnit XML: one test case per item and evaluator",
    )
    group.add_argument(
        "--baseline", metavar="DIR", help="compare with this earlier run in --summary-md and --junit"
    )
    group.add_argument(
        "--fail-on-regression",
        metavar="BASELINE_DIR",
        help="compare with this run and exit 1 when an evaluator's pass rate dropped significantly "
        "(paired McNemar test, Holm-adjusted, 95%% level); not on noise",
    )
    group.add_argument("--report-url", metavar="URL", help="link the summary to report.html at this address")


@dataclass
class CiOutputs:
    """What the CI options asked for, and the baseline read before the evaluation."""

    args: Any
    kind: str  # "run" or "spans"
    baseline_dir: str | None
    baseline: Any = None  # a scored frame (run) or (entries, rules) (spans)

    def finish_run(self, scored, report: Path | str | None) -> int:
        """Write the outputs of an ``evalkit run``; 1 when the regression gate fails, else 0.

        With a baseline the run is read back from its results.json: that file records the document's sha256,
        which the comparison checks against the baseline's (different documents get a notice)."""
        from evalkit.documents.case_table import document_title

        judge = scored.attrs["evalkit"].get("judge")
        if self.baseline is not None and report is not None:
            from evalkit.documents.run_reader import read_run

            scored = read_run(Path(report).parent)
        return self._finish(scored, self.baseline, document_title(scored), judge, report)

    def finish_folder(self, out: Path) -> int:
        """Write the outputs of a run already saved in ``out`` (``--engine spark``), read back from results.json."""
        if not self.wanted:
            return 0
        from evalkit.documents.case_table import document_title
        from evalkit.documents.run_reader import read_run

        scored = read_run(out)
        meta = scored.attrs.get("evalkit") or {}
        return self._finish(
            scored, self.baseline, document_title(scored), meta.get("judge"), out / "report.html"
        )

    @property
    def wanted(self) -> bool:
        """Whether any CI output or comparison was asked for."""
        return bool(self.args.summary_md or self.args.junit or self.baseline_dir)

    def finish_spans(self, out: Path, judge: dict | None) -> int:
        """Write the outputs of an ``evalkit spans eval`` from its results.json in ``out``."""
        from evalkit.analysis.span_runs import read_span_results, span_case_tables

        entries, rules = read_span_results(out)
        frame, baseline = span_case_tables(entries, rules, self.baseline)
        return self._finish(
            frame, baseline, f"spans {Path(self.args.spans).name}", judge, out / "results.json"
        )

    def _finish(self, frame, baseline, title: str, judge: dict | None, report) -> int:
        from evalkit.documents.redaction import redact, redact_frame, redact_value

        # a CI output is published (a PR comment, a job summary, a test report): no key in it, whatever a
        # response, a reason or an error quotes (the values are redacted, never the text written)
        frame, title, judge = redact_frame(frame), redact(title), redact_value(judge)
        baseline = redact_frame(baseline) if baseline is not None else None
        comparison = verdicts = None
        label = None
        if baseline is not None:
            from evalkit.analysis.comparison import compare  # 0.07 s to import: only when comparing

            label = Path(self.baseline_dir).name or str(self.baseline_dir)
            comparison = compare(baseline, frame, labels=(label, "this run"))
            from evalkit.analysis.regression_gate import verdicts as all_verdicts

            verdicts = all_verdicts(comparison)
        notices = self._notices(comparison)
        if self.args.summary_md:
            from evalkit.reporting.ci_summary import summary_markdown

            text = summary_markdown(
                frame,
                title=title,
                comparison=comparison,
                baseline=label,
                judge=judge,
                report=str(report) if report else str(self._results_dir()),
                report_url=self.args.report_url,
                notices=notices,
            )
            _write(self.args.summary_md, "the Markdown summary", lambda h: h.write(text))
            print(f"Summary: {self.args.summary_md}")
        if self.args.junit:
            from evalkit.reporting.junit import write_junit

            _checked(
                self.args.junit,
                "the JUnit file",
                lambda: write_junit(frame, self.args.junit, title=title, verdicts=verdicts, baseline=label),
            )
            print(f"JUnit:   {self.args.junit}")
        if comparison is not None:
            from evalkit.analysis.comparison_checks import notice_lines

            for line in notice_lines(notices):
                print(line, file=sys.stderr)
        return self._gate(verdicts, label)

    def _notices(self, comparison) -> list | None:
        """The comparison's notices; a span run has no document sha256 to check: that notice is dropped."""
        if comparison is None:
            return None
        if self.kind != "spans":
            return comparison.notices
        return [n for n in comparison.notices if n[1] != "Documents not checked."]

    def _results_dir(self) -> Path:
        return Path(self.args.out) if self.args.out else Path("results")

    def _gate(self, verdicts, label: str | None) -> int:
        if verdicts is None:
            return 0
        from evalkit.analysis.regression_gate import TEST_NAME, gate_line, nothing_tested

        drops = [v for v in verdicts if v.regression]
        untested = [v.evaluator for v in verdicts if v.kind == "too few pairs"]
        gating = self.args.fail_on_regression is not None
        for v in drops:
            print(gate_line(v, label), file=sys.stderr if gating else sys.stdout)
        why = nothing_tested(verdicts)
        if why and gating:
            raise EvalkitError(
                f"--fail-on-regression {self.baseline_dir}: not tested: {why}, so the gate cannot pass or fail; "
                "give the --out folder of an earlier run of the same document (this run's files are written)"
            )
        if why:
            print(f"Not tested against {label}: {why}", file=sys.stderr)
            return 0
        if not drops:
            tests = sum(v.kind != "too few pairs" for v in verdicts)
            print(
                f"No significant regression against {label}: {TEST_NAME} per evaluator at the 95% level, "
                f"Holm-adjusted over {tests} evaluator{'s' if tests != 1 else ''}"
                + (f"; too few pairs to test {', '.join(untested)}" if untested else "")
            )
        if gating and drops:
            print(
                f"Gate failed: {len(drops)} evaluator(s) regressed against {label} (--fail-on-regression)",
                file=sys.stderr,
            )
            return 1
        return 0


def _write(path: str, what: str, fill) -> None:
    from evalkit.documents.files.atomic import atomic_write

    def run() -> None:
        with atomic_write(path) as handle:
            fill(handle)

    _checked(path, what, run)


def _checked(path: str, what: str, action) -> None:
    try:
        action()
    except OSError as exc:
        raise EvalkitError(f"cannot write {what} to {path}: {exc.strerror or exc}") from None


def prepare(args, kind: str) -> CiOutputs:
    """Check the CI options and read the baseline now, before any evaluation (see the module docstring)."""
    baseline_dir = args.fail_on_regression or args.baseline
    if args.fail_on_regression and args.baseline and Path(args.baseline) != Path(args.fail_on_regression):
        raise EvalkitError(
            f"--baseline {args.baseline} and --fail-on-regression {args.fail_on_regression} name two baselines: "
            "give one (--fail-on-regression compares with its folder and gates)"
        )
    if args.report_url and not args.report_url.lower().startswith(("https://", "http://")):
        raise EvalkitError(f"--report-url {args.report_url}: give an http:// or https:// address")
    ci = CiOutputs(args=args, kind=kind, baseline_dir=baseline_dir)
    if ci.wanted and getattr(args, "engine", None) == "spark":
        from evalkit.cli.run_options.spark import _is_parquet

        if _is_parquet(Path(args.document)):
            raise EvalkitError(
                f"{args.document} is a Parquet case table: a Spark run of a table writes results.parquet only, "
                "and --summary-md, --junit, --baseline and --fail-on-regression read results.json; run the "
                "eval document (JSON) instead"
            )
    if baseline_dir is None:
        return ci
    option = "--fail-on-regression" if args.fail_on_regression else "--baseline"
    if not Path(baseline_dir).exists():
        raise EvalkitError(
            f"{option} {baseline_dir}: no such folder (give the --out folder of an earlier run)"
        )
    if kind == "spans":
        from evalkit.analysis.span_runs import read_span_results

        ci.baseline = read_span_results(baseline_dir)
    else:
        from evalkit.documents.run_reader import read_run

        ci.baseline = read_run(baseline_dir)
    return ci
