"""Exact odds and house edges of every wager a ruleset permits, from its rule pack.

`shoe.py` enumerates every way the cards of a fresh shoe of N decks can fall in a round
(by point value, ranks only where a wager needs them) and groups them into outcome
states with exact integer weights; `wagers.py` prices each wager on those states from
the pack's payouts and the table options (`table_options.py`); `royal9.py` prices Royal 9,
which needs the suits of the first four cards; `report.py` gathers one ruleset's
figures and prints them. Nothing here branches on a ruleset's name: a new pack is
priced by the same code.

The package stands on the floor of the settlement stage and reads only the packs.
"""
