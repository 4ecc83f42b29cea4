"""What the tests share, imported by them and by the conftest files: the repository's
folders, the command line run in process, the datasets and hostile data they build, the
browser's helpers, the witnesses' catalogs, the desk's archive and the nights and months
of simulated play. A test module imports from here, never from another test module."""
