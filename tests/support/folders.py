"""Folders held still: every entry under a folder with its content's hash, taken before
and after an attack on it, and the manifest planted where an output set is looked for."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

PLANTED_MANIFEST = json.dumps({"tool": "auditor", "files": {}})


def snapshot(folder: Path) -> dict[str, str]:
    """Every entry under `folder` (not following links) with its content's hash."""
    entries = {}
    for path in sorted(folder.rglob("*")):
        name = path.relative_to(folder).as_posix()
        if path.is_symlink():
            entries[name] = f"link to {os.readlink(path)}"
        elif path.is_file():
            entries[name] = hashlib.sha256(path.read_bytes()).hexdigest()
        else:
            entries[name] = "folder"
    return entries
