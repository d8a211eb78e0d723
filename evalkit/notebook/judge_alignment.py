"""The judge studio's alignment actions: align the saved judge to the labels beside its document, list the aligned
versions beside the original, and show what each changed.

``JudgeStudio.align()`` runs :func:`evalkit.align` on the studio's judge (as saved in ``custom_dir``), its case
table (``df``) and model, with the labels in ``studio.labels_path`` unless ``labels=`` is given: the
``labels_path`` the studio was opened with, else the labels file beside the table's document
(:func:`evalkit.analysis.labels.labels_path`, the labelling widget's default too). A notebook that keeps its
labels elsewhere opens both on one path: ``LabellingWidget(df, name, labels_path=studio.labels_path)``. The aligned judge is written as a new custom evaluator
(``<name>_aligned``, ``<name>_aligned2``, ...: ``evalkit.analysis.alignment.writing``); ``aligned_versions()``
lists the original and every aligned version with its held-out kappa before and after and the verdict, and
``aligned_diff()`` is the unified diff from the original prompt to one of them. The widget's "Align to labels"
button calls ``align()`` and shows the result and the diff (``evalkit.notebook.studio_view``).

May import: ``evalkit.analysis`` (alignment, labels) and ``evalkit.errors``.
"""

from __future__ import annotations

import difflib
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evalkit.errors import EvalkitError

if TYPE_CHECKING:
    import pandas as pd

    from evalkit.analysis.alignment.report import Alignment

__all__ = ["AlignmentActions"]


class AlignmentActions:
    """Mixed into ``JudgeStudio``: needs ``name``, ``custom_dir``, ``df``, ``model_config``, ``concurrency``,
    ``is_new``, ``dirty``, ``prompt_text`` and ``_changed()``."""

    alignment: Alignment | None = None  # the latest align() result
    labels_file: Path | None = None  # the labels_path the studio was opened with

    @property
    def labels_path(self) -> Path:
        """The labels file ``align()`` reads: the one the studio was opened with, else the document's
        (:func:`evalkit.analysis.labels.labels_path`, where the labelling widget writes by default)."""
        from evalkit.analysis.labels import labels_path

        if self.labels_file is not None:
            return self.labels_file
        if self.df is None:
            raise EvalkitError("the studio has no case table: open it with df=evalkit.load('my-eval.json')")
        return labels_path(self.df)

    def align(self, labels: Any = None, **options: Any) -> Alignment:
        """Align the saved judge to human ``labels`` (default: the file ``studio.labels_path``); ``options`` go
        to :func:`evalkit.align` (``rounds``, ``max_calls``, ``optimizer_model``, ...)."""
        from evalkit.analysis.alignment.loop import align

        if self.is_new or self.dirty:
            raise EvalkitError(
                f"save the judge first (studio.save()): alignment starts from {self.name}.prompty as it is on disk"
            )
        if self.df is None:
            raise EvalkitError("the studio has no case table: open it with df=evalkit.load('my-eval.json')")
        source = labels if labels is not None else self.labels_path
        if labels is None and not source.is_file():
            raise EvalkitError(
                f"no labels file {source} yet: label rows with LabellingWidget(df, {self.name!r}, "
                "labels_path=studio.labels_path) first, or pass labels="
            )
        options.setdefault("model_config", self.model_config)
        options.setdefault("concurrency", self.concurrency)
        self.alignment = align(self.name, source, self.df, custom_dir=self.custom_dir, **options)
        self._changed()
        return self.alignment

    def aligned_versions(self) -> pd.DataFrame:
        """The original judge and its aligned versions: ``name``, ``folder``, held-out ``kappa_before`` /
        ``kappa_after``, ``verdict`` and ``chosen`` (what the variant changed)."""
        import pandas as pd

        from evalkit.analysis.alignment.writing import aligned_versions

        rows = [{"name": self.name, "folder": str(self.custom_dir / self.name), "verdict": "original"}]
        for version in aligned_versions(self.name, self.custom_dir):
            record = version["record"]
            kappa = (record.get("held_out") or {}).get("kappa") or {}
            rows.append(
                {
                    "name": version["name"],
                    "folder": str(version["folder"]),
                    "kappa_before": (kappa.get("before") or [None])[0],
                    "kappa_after": (kappa.get("after") or [None])[0],
                    "verdict": record.get("verdict"),
                    "chosen": record.get("chosen"),
                }
            )
        columns = ["name", "folder", "kappa_before", "kappa_after", "verdict", "chosen"]
        return pd.DataFrame(rows, columns=columns)

    def aligned_diff(self, name: str | None = None) -> str:
        """The unified diff from the judge's saved prompt to aligned version ``name`` (default: the latest)."""
        from evalkit.analysis.alignment.writing import aligned_versions

        versions = aligned_versions(self.name, self.custom_dir)
        if not versions:
            raise EvalkitError(f"{self.name} has no aligned version yet: run studio.align() first")
        chosen = versions[-1] if name is None else next((v for v in versions if v["name"] == name), None)
        if chosen is None:
            names = ", ".join(v["name"] for v in versions)
            raise EvalkitError(f"no aligned version {name!r} of {self.name} (there are: {names})")
        original = (self.custom_dir / self.name / f"{self.name}.prompty").read_text(encoding="utf-8")
        aligned = (chosen["folder"] / f"{chosen['name']}.prompty").read_text(encoding="utf-8")
        return "".join(
            difflib.unified_diff(
                original.splitlines(keepends=True),
                aligned.splitlines(keepends=True),
                fromfile=f"{self.name}.prompty",
                tofile=f"{chosen['name']}.prompty",
            )
        )
