"""What people read: charts, the standalone HTML pages, CSV, the papermill report and its template.

- ``run_files``: ``save_results`` (results.json, results.csv, report.html of a run).
- ``charts``: plotly figures; ``html_page``: the run's standalone page; ``csv_file``: results.csv.
- ``notebook_report``: ``evalkit report`` (``templates/report.ipynb`` executed with papermill, exported).

May import: ``evalkit.analysis`` and everything below it; never ``notebook`` or ``cli``.
"""
