"""Reports written from a scored case table: results.csv, the standalone report.html, and friends."""
