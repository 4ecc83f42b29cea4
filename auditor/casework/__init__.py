"""A rule pack's YAML cases run through the whole audit (`auditor rules test DIR`).

Each case is a small hand history that is right or wrong by exactly one rule; its
verdict is the audit's own findings and quarantine (docs/packs.md, "Test it", describes
the format). `files.py` reads and checks the case files, `build.py` turns a case into
the rows of its table from what the case gives and the pack's conventions,
`batch.py` gives every case of a run its own ids in one dataset and splits the audit's
findings back to the cases, `verdict.py` judges a case's share, `runner.py` runs them.
"""
