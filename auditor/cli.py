"""Command line: the group that assembles the commands, each in its own module of
`auditor.commands`; nothing else lives here.

Exit codes follow ruff and sqlfluff: 0 clean, 1 findings (or quarantined rows for
`validate`), 2 when the input or the command cannot be used.

Every command writes where `--out` (`-o`) says; its earlier spellings (`--output`, the
positional OUT of `simulate`) still work, with a one-line note on stderr.
"""

from __future__ import annotations

import click

from auditor import __version__
from auditor.commands.archive import archive, review
from auditor.commands.audit import audit
from auditor.commands.diff import diff
from auditor.commands.exits import Commands
from auditor.commands.explain import explain
from auditor.commands.odds import odds
from auditor.commands.query import query
from auditor.commands.report import report
from auditor.commands.rules import rules
from auditor.commands.serve import serve
from auditor.commands.simulate import simulate
from auditor.commands.surveil import surveil
from auditor.commands.users import users
from auditor.commands.validate import validate
from auditor.commands.verify import verify
from auditor.commands.watch import watch


@click.group(cls=Commands, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="auditor")
def main() -> None:
    """Compliance hand-history auditor for casino baccarat.

    Examples:

    \b
      auditor validate /exports/2026-11-24
      auditor audit /exports/2026-11-24 -o /audits/2026-11-24
      auditor query /audits/2026-11-24 "SELECT rule, count(*) FROM findings GROUP BY rule"
      auditor rules --format csv

    Every command answers -h: auditor audit -h.

    Exit status: 0 nothing to report, 1 findings (or quarantined rows, differences), 2
    unusable input or arguments, 3 internal error, 130 interrupted.
    """


main.add_command(validate)
main.add_command(audit)
main.add_command(simulate)
main.add_command(odds)
main.add_command(rules)
main.add_command(diff)
main.add_command(query)
main.add_command(explain)
main.add_command(archive)
main.add_command(review)
main.add_command(verify)
main.add_command(report)
main.add_command(surveil)
main.add_command(serve)
main.add_command(users)
main.add_command(watch)

if __name__ == "__main__":
    main()
