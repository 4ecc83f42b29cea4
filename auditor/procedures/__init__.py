"""Stage 5, procedures: the shoe checks (SHO) and the table procedures (PRC), wired in
`stage.py`.

Every checking stage (replay, settlement, procedures) exports the same two names:
`find(part, replayed, options, packs)`, its findings frames over a partition as
`pipeline.hold_partition` holds it, and `CHECK_SETS`, its checks.
"""

from auditor.procedures.stage import CHECK_SETS, find

__all__ = ["CHECK_SETS", "find"]
