"""evalkit: evaluate LLM agents from eval documents, as pandas DataFrames, column by column.

    import evalkit
    df = evalkit.load("data/demo.json")          # the case table: one row per item or turn
    scored = evalkit.evaluate(df)                # result columns, status and error per row
    evalkit.summary(scored)                      # pass rates per evaluator
    evalkit.save_results(scored, "out/demo")     # results.json, results.csv, report.html

Heavy libraries (pandas, promptflow, azure-ai-evaluation, plotly, ipywidgets) load on first use, so
``import evalkit`` stays fast.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

# Nothing of evalkit is imported here, ``__version__`` included: ``python -m evalkit`` imports this package
# before ``evalkit.__main__`` can catch a Ctrl-C, so the less it does the smaller that window.
_API = {
    "__version__": ("evalkit.documents.versions", "EVALKIT_VERSION"),
    "load": ("evalkit.documents.case_table", "load"),
    "to_document": ("evalkit.documents.write_back", "to_document"),
    "evaluate": ("evalkit.engine", "evaluate"),
    "sample_judgments": ("evalkit.engine", "sample_judgments"),
    "save_results": ("evalkit.reporting.run_files", "save_results"),
    "summary": ("evalkit.analysis.summaries", "summary"),
    "compare": ("evalkit.analysis.comparison", "compare"),
    "pairwise": ("evalkit.analysis.pairwise.result", "pairwise"),
    "calibrate": ("evalkit.analysis.calibration", "calibrate"),
    "align": ("evalkit.analysis.alignment.loop", "align"),
    "judge_noise": ("evalkit.analysis.noise", "judge_noise"),
    "flaky_items": ("evalkit.analysis.flaky", "flaky_items"),
    "Labels": ("evalkit.analysis.labels", "Labels"),
    "read_run": ("evalkit.documents.run_reader", "read_run"),
    "read_csv": ("evalkit.documents.encoding.csv_cells", "read_csv"),
    "runs": ("evalkit.analysis.history", "runs"),
    "status_counts": ("evalkit.analysis.summaries", "status_counts"),
    "validate": ("evalkit.documents.validation", "validate_document"),
    "judge_config": ("evalkit.judges.models", "judge_config"),
    "EvalkitError": ("evalkit.errors", "EvalkitError"),
    "DocumentError": ("evalkit.errors", "DocumentError"),
    "EvaluatorConfigError": ("evalkit.errors", "EvaluatorConfigError"),
    "EnvironmentConfigError": ("evalkit.errors", "EnvironmentConfigError"),
    "EvalkitWarning": ("evalkit.documents.versions", "EvalkitWarning"),
}

__all__ = [
    "DocumentError",
    "EnvironmentConfigError",
    "EvalkitError",
    "EvalkitWarning",
    "EvaluatorConfigError",
    "Labels",
    "__version__",
    "align",
    "calibrate",
    "compare",
    "evaluate",
    "flaky_items",
    "judge_config",
    "judge_noise",
    "load",
    "pairwise",
    "read_csv",
    "read_run",
    "runs",
    "sample_judgments",
    "save_results",
    "status_counts",
    "summary",
    "to_document",
    "validate",
]

if TYPE_CHECKING:  # pragma: no cover - for type checkers and IDEs only
    from evalkit.analysis.alignment.loop import align
    from evalkit.analysis.calibration import calibrate
    from evalkit.analysis.comparison import compare
    from evalkit.analysis.flaky import flaky_items
    from evalkit.analysis.history import runs
    from evalkit.analysis.labels import Labels
    from evalkit.analysis.noise import judge_noise
    from evalkit.analysis.pairwise.result import pairwise
    from evalkit.analysis.summaries import status_counts, summary
    from evalkit.documents.case_table import load
    from evalkit.documents.encoding.csv_cells import read_csv
    from evalkit.documents.run_reader import read_run
    from evalkit.documents.validation import validate_document as validate
    from evalkit.documents.versions import EVALKIT_VERSION as __version__
    from evalkit.documents.versions import EvalkitWarning
    from evalkit.documents.write_back import to_document
    from evalkit.engine import evaluate, sample_judgments
    from evalkit.errors import DocumentError, EnvironmentConfigError, EvalkitError, EvaluatorConfigError
    from evalkit.judges.models import judge_config
    from evalkit.reporting.run_files import save_results


def __getattr__(name: str):
    """Import the public API on first use (PEP 562)."""
    try:
        module, attr = _API[name]
    except KeyError:
        raise AttributeError(f"module 'evalkit' has no attribute {name!r}") from None
    value = getattr(importlib.import_module(module), attr)
    globals()[name] = value
    return value


def __dir__():
    return __all__
