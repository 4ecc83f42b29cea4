"""pandera models of the hand-history contract, one per table."""
