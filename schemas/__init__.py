"""pandera models of the hand-history contract, one per table."""

from auditor.schemas.models import (
    MODELS,
    CommissionCollectionsModel,
    RoundsModel,
    Royal9SeatsModel,
    ShoesModel,
    TablesModel,
    WagersModel,
)

__all__ = [
    "MODELS",
    "CommissionCollectionsModel",
    "RoundsModel",
    "Royal9SeatsModel",
    "ShoesModel",
    "TablesModel",
    "WagersModel",
]
