"""Eval documents <-> the case table: the bottom layer, which every other package reads through.

- ``case_table``: ``load`` (schema v1 and legacy forms) into one DataFrame row per item or per thread turn
  (``case_cells``: the document read into the table's cells without pandas or numpy; ``load_ahead``: those
  cells read in a forked child while the command imports pandas; ``empty_cells``: the read-only empty list /
  dict shared by empty cells; ``rebuilt_items``: the items whose ``source`` dict is not kept because the
  columns rebuild it);
  ``columns``: the case table's column names and where each evaluator's scores go.
- ``validation`` (with ``schema/``, evalkit's own copy of the upstream schema with the seeds' differences),
  ``versions`` (schema versions and in-memory upgrades).
- ``evaluator_maps``: built-in evaluator names, ``default_evaluators`` / ``evaluators_mode`` resolution per
  row, tool allowlists.
- ``statuses``: row and thread statuses by the upstream rules.
- ``results`` (``scores`` objects, streamed ``results.json``), ``write_back`` (``to_document``),
  ``run_reader`` (``read_run``: a results file back into a scored case table), ``json_input`` (the reader of all
  user JSON), ``redaction`` (credentials out of every stored or printed message).
- ``encoding/``: the exact bytes of results.json's items and of CSV files (``json_items``, ``json_rows``,
  ``json_scores``, ``csv_text``, ``csv_cells``: the formula-injection guard and ``read_csv``, which undoes it).
- ``files/``: files on disk (``atomic`` writes, ``folder_swap``: a results folder replaced as one set,
  ``private``, ``output_paths``, ``input_files``). Both subpackages import nothing else of ``documents``.

May import: ``evalkit.errors`` only.
"""
