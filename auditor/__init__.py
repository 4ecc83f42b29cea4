"""auditor: compliance hand-history auditor for casino baccarat.

The audit runs as a pipeline of stages, each a module that maps frames to frames:
load -> validate -> replay -> settle -> procedures -> findings -> outputs.
"""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("auditor")
except PackageNotFoundError:  # running from a source tree that was never installed
    __version__ = "0.0.0"
