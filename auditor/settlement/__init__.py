"""Stage 4, settle: every wager's correct result, payout and commission, to the cent
(`correct.py`), and the PAY, COM and WAG checks against the logged ones (`wagers.py`).

Every checking stage (replay, settlement, procedures) exports the same two names:
`find(part, replayed, options, packs)`, its findings frames over a partition as
`pipeline.hold_partition` holds it, and `CHECK_SETS`, its checks.
"""

from auditor.settlement.wagers import CHECK_SETS, find

__all__ = ["CHECK_SETS", "find"]
