"""Reports for people, read from a run's catalog (`OUTDIR/audit.duckdb`): the nightly
HTML report every audit writes (`nightly.py`), investigation reports of one patron,
dealer, table or round (`investigate.py`, `auditor report`), each finding's evidence
(`evidence.py`) with the regulation's own words (`sections.py`). They stand on the output
floor: they read the catalog the outputs write, and the pipeline calls the nightly one.
"""
