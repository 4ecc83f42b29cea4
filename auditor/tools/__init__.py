"""Tools for working on the repository, not for auditing: `generate` rewrites its
generated files."""
