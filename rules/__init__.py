"""Ruleset packs: one YAML file per ruleset, loaded by auditor.packs."""
