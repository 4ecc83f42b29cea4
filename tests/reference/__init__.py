"""A second, independent statement of the game: a plain row-by-row reference auditor.

Written from the regulation texts (`shared/regulations/` beside the repository) and the
hand-history contract, not from the engine: it imports nothing from `auditor`, has its
own draw tables, paytables and commission rounding, and loops over rows in plain Python
so that each rule reads as the text states it. `audit.reference_findings` returns the findings
of the families it covers (DRW, TOT001-TOT004, PAY, COM001-COM003, WAG) for the
differential test against the engine.
"""
