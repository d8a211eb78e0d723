"""Every count evalkit prints in the CLI and the analysis messages goes through ``formatting.count`` (one plural
rule): a guard over the source, so a new ``f"{n} rows"`` cannot bring back "1 rows"."""

from __future__ import annotations

import re
from pathlib import Path

from evalkit.analysis.formatting import count

PACKAGE = Path(__file__).resolve().parents[2] / "evalkit"
NOUNS = (
    "rows|items|calls|spans|records|results|sessions|evaluators|errors|labels|turns|runs|requests|files|pairs"
)
#: ``{expression} noun`` inside a string, e.g. ``f"{len(x)} rows"`` (``{n:,} rows`` too).
COUNTED = re.compile(r"\{([^{}]+)\}[ ](?:paired |unpaired )?(" + NOUNS + r")\b")
#: Expressions that are never 1 (constants of at least 2).
NEVER_ONE = {"MIN_PAIRS"}


def test_counts_in_cli_and_analysis_messages_use_the_plural_rule():
    offenders = []
    for folder in ("cli", "analysis"):
        for path in sorted((PACKAGE / folder).glob("*.py")):
            for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
                for match in COUNTED.finditer(line):
                    if match.group(1).split(":")[0].strip() not in NEVER_ONE:
                        offenders.append(f"{path.relative_to(PACKAGE)}:{number}: {line.strip()}")
    assert offenders == [], "use formatting.count(n, noun):\n" + "\n".join(offenders)


def test_the_rule_itself():
    assert (
        count(1, "row") == "1 row"
        and count(0, "row") == "0 rows"
        and count(1200, "paired row") == "1,200 paired rows"
    )
    assert count(1, "query") == "1 query" and count(2, "query") == "2 queries"
