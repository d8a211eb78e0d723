"""Numbers about scored case tables: summaries, run comparison, calibration against people, judge noise.

- ``summaries``: pass rate, mean score and tokens per evaluator; status counts.
- ``pairing``: which rows of two tables are the same case ((item, turn), and the prompt for two runs).
- ``statistics``: McNemar test, paired bootstrap, and the resampling defaults (seed, resamples, confidence).
- ``comparison``: two runs compared (``compare``, the ``Comparison`` model: deltas, regressions);
  ``comparison_views``: its text table and notebook HTML.
- ``regression_gate``: the verdict per evaluator against a baseline (McNemar, Holm-adjusted) behind
  ``--fail-on-regression``; ``span_runs``: a ``spans eval`` results folder as a scored case table.
- ``labels``: human labels beside a document; ``agreement``: kappa, Spearman, within one, bias and their
  bootstrap intervals; ``calibration``: judge against people (``calibrate``, the ``Calibration`` model);
  ``noise``: judge noise over repeated judgments (spread, flips, pass^k, pass@k); ``calibration_views``: the
  notebook HTML of both; ``flaky``: the items of a ``samples=K`` run whose judgments flipped (``flaky_items``).
- ``pairwise``: ``evalkit.pairwise``: a pairwise judge on the shared prompts of two runs, both orders, win / tie /
  loss with the exact interval (its judge calls go through ``evalkit.judges``).
- ``alignment/``: ``evalkit.align``, a judge's prompt aligned to human labels (split, proposals, held-out
  before/after, the aligned judge written as a new custom evaluator); its ``__init__`` lists its modules.

Figures and standalone pages of these results are drawn in ``evalkit.reporting`` (``charts``,
``comparison_page``), which imports this package, never the reverse.

May import: ``evalkit.engine`` and everything below it; never ``reporting``, ``notebook`` or ``cli``.
"""
