"""What the ``evalkit`` command does to its own process, which a library imported into someone else's must not.

``lean_imports`` (pandas imported without pyarrow, which no command outside Spark needs: 57 MB less resident
after ``import pandas``, 0.06 s less to import the command), ``heap`` (the C heap's free memory given back to
the system once a large table is scored, so the forked writers start from less). Both change process-wide
state, which is why they live in the command line and not in ``evalkit.engine`` or ``evalkit.reporting``
(issue 20).

The bottom of ``evalkit.cli``: may import nothing of evalkit (the standard library only).
"""
