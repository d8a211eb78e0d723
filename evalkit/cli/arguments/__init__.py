"""What several commands parse and print alike: the argument parser, output path types, the judge's cost.

``parser`` (``Parser``: an argument mistake is one ``Error:`` line and a hint, exit 2, at every level of the
command), ``paths`` (``type=output_file`` / ``output_folder``: output paths that refuse links, checked while
the arguments are parsed), ``judge_cost`` (``--price IN/OUT`` and the ``Judge:`` summary line, used by
``run``, ``spans eval``, ``compare --pairwise`` and ``align``).

The bottom of ``evalkit.cli``: may import ``evalkit.judges``, ``evalkit.documents``, ``evalkit.analysis``
(number formatting) and ``evalkit.errors``; no other ``evalkit.cli`` module (every command reads through it).
"""
