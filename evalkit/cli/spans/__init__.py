"""``evalkit spans``: the span evaluator commands, one module per subcommand, over ``evalkit.spans``.

``command`` (the ``spans`` group and ``spans eval``: Lambda-style evaluators over span files), ``package``
(``spans package``: a span evaluator's AWS Lambda zip), ``invoke`` (``spans invoke``: a recorded AgentCore event replayed as Lambda
would), ``serve`` (``spans serve``, online evaluation of live OTLP telemetry, and ``spans status``),
``stream`` (``spans stream``: the same as a Spark Structured Streaming job), ``to_document`` (``spans
to-document``: traces as an eval document), ``options`` (the options they share: evaluators folder, session
attribute, log level).

The top of ``evalkit.cli`` below its ``__init__``: may import ``evalkit.cli.arguments``,
``evalkit.cli.run_options`` (the CI outputs, Spark errors), ``evalkit.cli.run`` (its duration and rate
argument types), every layer below the CLI, and ``evalkit.errors``.
"""
