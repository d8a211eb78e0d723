"""Numbers about scored case tables: summaries, run comparison, calibration against people, judge noise.

- ``summaries``: pass rate, mean score and tokens per evaluator; status counts.
- ``comparison``: two runs paired by item, turn and prompt (McNemar, paired bootstrap, regressions).
- ``labels``: human labels beside a document; ``calibration``: judge against people (kappa, Spearman, ...)
  and judge noise over repeated judgments.

May import: ``evalkit.engine`` and everything below it; never ``reporting``, ``notebook`` or ``cli``.
"""
