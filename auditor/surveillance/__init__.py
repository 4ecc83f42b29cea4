"""Surveillance: statistics of the night against the exact game, and the alerts.

Per table, shoe, dealer and rated patron, the night's counts are tested against what a
fair game gives for the shoes' decks (`expected.py`, from `auditor.odds`): the outcomes
(a chi-square and each outcome's rate), Naturals and pairs (`round_tests.py`), each patron's
side-wager wins and money won (`patrons.py`), each table's hold against its theoretical
hold (`holds.py`) and each dealer's rounds with a finding. `gather.py` counts what the
tests need partition by partition, from the rows and the replay the audit holds,
`stats.py` holds the p-values and the Benjamini-Hochberg step, `night.py` runs it all
and picks the alerts; `schema.py` the columns of the files.

Alerts are not findings: written to their own files and catalog tables, they never
change `findings.parquet` or the exit status. The package stands just below the outputs
and reads the validated rows, the findings, the replay and the odds.
"""
