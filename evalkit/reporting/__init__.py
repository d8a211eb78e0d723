"""What people read: charts, the standalone HTML pages, CSV, the papermill report and its template.

- ``run_files``: ``save_results`` (results.json, results.csv, report.html of a run).
- ``charts``: plotly figures; ``csv_file``: results.csv.
- ``html_page``: the run's standalone report.html (``page_data``: the columns it embeds; ``page_first``: its first rows, apart, shown before the rest is read; ``page_samples``: its flaky marks,
  ``--samples K``; ``assets/``: its CSS
  and JS).
- ``comparison_page``: the standalone page of two compared runs (``evalkit compare --out``).
- ``ci_summary``: the Markdown summary for a PR comment or CI job summary (``--summary-md``), its untrusted
  text made inert by ``markdown_text``; ``junit``: JUnit XML (``--junit``).
- ``inline``: what every standalone page inlines, safely: script-safe JSON, CSP hashes, the ``assets/`` files.
- ``notebook_report``: ``evalkit report`` (``templates/report.ipynb`` executed with papermill, exported to one
  offline page); a subpackage with one module per report section, plus export and execution.

May import: ``evalkit.analysis`` and everything below it; never ``notebook`` or ``cli``.
"""
