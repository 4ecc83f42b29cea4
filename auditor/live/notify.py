"""Where a finding reported live goes: a JSON line on stdout, and `--on-finding CMD` (a
pager, a ticket system) with the finding's JSON on its standard input.

The command is split as a shell would (shlex) but run without one: no expansion, no
redirection, no second command. It has `ON_FINDING_TIMEOUT` seconds per finding; a
failure, a timeout or a missing program is said on stderr and never stops the watch.
"""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
from collections.abc import Callable

ON_FINDING_TIMEOUT = 30.0


def finding_line(record: dict) -> str:
    return json.dumps(record, sort_keys=True, ensure_ascii=False)


class Notifier:
    def __init__(
        self,
        on_finding: str | None,
        say: Callable[[str], None],
        timeout: float = ON_FINDING_TIMEOUT,
    ) -> None:
        self.command = shlex.split(on_finding) if on_finding else None
        self.say = say
        self.timeout = timeout

    def print(self, records: list[dict]) -> None:
        for record in records:
            sys.stdout.write(finding_line(record) + "\n")
        sys.stdout.flush()

    def hand_over(self, records: list[dict]) -> None:
        """Each record to the command, one run each; failures said, never raised."""
        if not self.command:
            return
        for record in records:
            what = f"--on-finding for finding {record.get('finding_id')}"
            try:
                done = subprocess.run(
                    self.command,
                    input=finding_line(record) + "\n",
                    text=True,
                    capture_output=True,
                    timeout=self.timeout,
                    check=False,
                )
            except subprocess.TimeoutExpired:
                self.say(f"{what}: no answer within {self.timeout:g} s; stopped, watch goes on")
                continue
            except OSError as exc:
                self.say(f"{what}: could not run {self.command[0]!r} ({exc.strerror})")
                continue
            if done.returncode != 0:
                last = (done.stderr.strip().splitlines() or [""])[-1][:200]
                self.say(f"{what}: exit status {done.returncode} {last}".rstrip())
