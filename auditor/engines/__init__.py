"""Engines: where stages 3-5 run when not in the auditing process itself.

`task.py` turns one partition into a small, self-contained task and audits it with a pure
function (re-opening the dataset, rebuilding the audited rows from the quarantine's
keys); `ids.py` does the same for a bucket of validation's id checks (unique ids, foreign
keys); `cluster.py` runs those tasks on a Dask cluster and gathers their quarantine rows
and findings into the same outputs as a run in one process. Validation's row checks and
the outputs stay with the client: the engines replace `pipeline.find` and where the id
checks' buckets run (`cross_rows.IdBuckets`).
"""
