"""The archive of runs across nights: every run's output set, one catalog over them all,
and the review ledger of each finding (`store.py`, `catalog.py`, `ledger.py`)."""
