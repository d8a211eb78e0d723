"""The option groups of ``evalkit run``, one module each, and the summary lines they add.

``batch`` (``--batch``: the judge calls through the Batch API, the ``Batch:`` line), ``samples`` (``--samples K
--pass-rule``, the ``Flaky:`` line), ``evaluators`` (``--evaluator NAME[=OPTIONS]`` added to every item),
``jury_lines`` (the ``Jury`` lines), ``spark`` (``--engine spark``: the run on Apache Spark, with the pandas
engine's outputs and exit codes), ``ci_outputs`` (``--summary-md``, ``--junit``, ``--baseline``,
``--fail-on-regression``, ``--report-url``; ``evalkit spans eval`` takes them too).

The command itself is ``evalkit.cli.run``, above this package. May import ``evalkit.cli.arguments``, the
layers below the CLI (``evalkit.spark``, ``evalkit.reporting``, ``evalkit.analysis``, ``evalkit.evaluators``,
``evalkit.judges``, ``evalkit.documents``) and ``evalkit.errors``; not the command modules or
``evalkit.cli.spans``.
"""
