"""Stage 3, replay: every round re-derived from its cards (`derive.py`, by the packs'
decision table, `decisions.py`), and the DRW and TOT checks over them (`checks.py`).

Every checking stage (replay, settlement, procedures) exports the same two names:
`find(part, replayed, options, packs)`, its findings frames over a partition as
`pipeline.hold_partition` holds it, and `CHECK_SETS`, its checks. The replay
also exports `replay`, the replayed rounds every later stage reads.
"""

from auditor.replay.checks import CHECK_SETS, find
from auditor.replay.derive import replay

__all__ = ["CHECK_SETS", "find", "replay"]
