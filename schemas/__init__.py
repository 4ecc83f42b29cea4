"""pandera models of the hand-history contract, one per table."""

from auditor.schemas.models import (
    MAX_ID_CHARS,
    MODELS,
    SHOWN_CHARS,
    VALID_CARDS,
    CommissionCollectionsModel,
    RoundsModel,
    Royal9SeatsModel,
    ShoesModel,
    TablesModel,
    WagersModel,
    bounded_text_columns,
    shown_past_bound,
)

__all__ = [
    "MAX_ID_CHARS",
    "MODELS",
    "SHOWN_CHARS",
    "VALID_CARDS",
    "CommissionCollectionsModel",
    "RoundsModel",
    "Royal9SeatsModel",
    "ShoesModel",
    "TablesModel",
    "WagersModel",
    "bounded_text_columns",
    "shown_past_bound",
]
