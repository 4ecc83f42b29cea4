"""Engines: where stages 3-5 run when not in the auditing process itself.

`task.py` turns one partition into a small, self-contained task and audits it with a pure
function (re-opening the dataset, rebuilding the audited rows from the quarantine's
keys); `cluster.py` runs those tasks on a Dask cluster and gathers their findings into
the same outputs as a run in one process. Validation and the outputs stay with the
client: the engines only replace `audit.find`.
"""
