"""The exact bytes of what evalkit writes, fast: results.json's items (``json_items``: orjson per item spaced like
``json.dumps``; ``json_rows`` + ``json_scores``: plain rows encoded column by column into templates, without a
dict per item) and CSV (``csv_text``: the column-wise writer with ``DataFrame.to_csv``'s bytes; ``csv_cells``:
spreadsheet-safe cells, the formula-injection guard of every CSV evalkit writes, and ``read_csv``, which undoes
it).

May import: ``evalkit.errors`` and the modules of this package only (no other part of ``evalkit.documents``).
"""
