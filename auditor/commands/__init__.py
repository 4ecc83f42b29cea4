"""Commands of the command line that live apart from `auditor.cli`, to keep it short."""
