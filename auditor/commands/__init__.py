"""The command line's commands, a module each (a group and its subcommands together), and
what they share; `auditor.cli` assembles them into one group."""
