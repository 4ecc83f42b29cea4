"""`auditor query` under attack and under load: links planted to escape the sandbox, a
statement that never ends or eats the memory, Ctrl-C, and data that would drive the
terminal. Each attack is made for real: real links, processes, signals and terminals."""

from __future__ import annotations

import fcntl
import os
import pty
import select
import shutil
import signal
import stat
import struct
import subprocess
import sys
import termios
import threading
import time
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path

import pytest

from auditor.commands import terminal
from auditor.commands.terminal import visible
from auditor.output.prompt import prompt_loop
from auditor.output.sandboxed_query import QueryError, QueryInterrupted, open_catalog, query
from auditor.pipeline import run_audit
from tests.support.cli import cli
from tests.support.datasets import base_rows, contract_frame

# Runs until stopped: DuckDB counts a cross join of two billion-row series row by row.
ENDLESS = "SELECT count(*) FROM generate_series(1, 1000000000) a, generate_series(1, 1000000000) b"
# Trips DuckDB's buffer manager at 100MB within a second (a list of 100 M integers).
HUNGRY = "SELECT list(range) FROM range(100000000)"
TITLE_AND_CLEAR = "\x1b]0;pwn\x07\x1b[2J"  # sets the window title, clears the screen
REVERSED = "abc\u202edef"  # shows as "abcfed"
PASSWD_LINE = Path("/etc/passwd").read_text(encoding="utf-8").splitlines()[0]


def write_tables(folder: Path, rows: dict[str, list[dict]]) -> Path:
    folder.mkdir(parents=True)
    for table, table_rows in rows.items():
        contract_frame(table, table_rows).write_parquet(folder / f"{table}.parquet")
    return folder


def hostile_rows() -> dict[str, list[dict]]:
    """Ids and a value that would drive a terminal; one wrong payout (a finding) and one
    bet that is no bet (quarantined, the escape sequence as its value)."""
    rows = base_rows()
    for round_row in rows["rounds"]:
        round_row["dealer_id"] = TITLE_AND_CLEAR
    first, second, third = rows["wagers"]
    first["patron_id"] = REVERSED
    second["wager_id"] = TITLE_AND_CLEAR + "W2"
    second["payout"] = Decimal("99.00")
    third["wager_id"] = REVERSED + "W3"
    third["bet"] = TITLE_AND_CLEAR
    return rows


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> Path:
    """ROOT/data audited into ROOT/out (hostile ids), and a clean dataset into ROOT/clean_out."""
    root = tmp_path_factory.mktemp("limits")
    run_audit(write_tables(root / "data", hostile_rows()), root / "out")
    run_audit(write_tables(root / "clean", base_rows()), root / "clean_out")
    return root


@pytest.fixture
def out(runs: Path) -> Path:
    return runs / "out"


def wide(*args: str, stdin: str | None = None):
    """`auditor ARGS` on a terminal wide enough that no line of a result is wrapped."""
    return cli(*args, stdin=stdin, terminal_width=200)


def auditor_command() -> list[str]:
    script = Path(sys.executable).with_name("auditor")
    return [str(script)] if script.exists() else [sys.executable, "-m", "auditor.cli"]


def child_environment(home: Path) -> dict[str, str]:
    return {**os.environ, "HOME": str(home)}  # the prompt's history file goes there


def default_sigint() -> None:
    # A child started from a shell's background job inherits SIGINT ignored, and Python
    # then installs no handler: Ctrl-C must reach the command as it would at a terminal.
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def wait_until_busy(process: subprocess.Popen, cpu: float = 2.5, limit: float = 60) -> None:
    """Until the process has spent `cpu` seconds (starting takes about 1): it is then
    inside the statement, not still importing."""
    deadline = time.monotonic() + limit
    while cpu_seconds(process.pid) < cpu:
        assert process.poll() is None, process.communicate()
        assert time.monotonic() < deadline, "the statement never got going"
        time.sleep(0.05)


# ---- 1. links out of the sandbox ----------------------------------------------------


def attack(outdir: Path, sql: str):
    # csv, not a table: a file's content that got through would show unfolded.
    return wide("query", str(outdir), sql, "--format", "csv")


def refused_without_passwd(result) -> None:
    """Refused by the sandbox, or (a link planted inside OUTDIR) by the set's
    verification before the catalog is opened."""
    assert result.exit_code == 2, result.output
    assert "refused" in result.output or "not as the audit wrote it" in result.output
    assert PASSWD_LINE not in result.output


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT content FROM read_text('{link}/etc/passwd')",
        "SELECT * FROM read_csv('{link}/etc/passwd', header = false)",
        "SELECT * FROM glob('{link}/etc/*')",
    ],
)
def test_a_link_at_duckdbs_default_temp_folder_reads_nothing(out: Path, sql: str) -> None:
    link = out / "audit.duckdb.tmp"  # where DuckDB keeps its temporary files by default
    link.symlink_to("/")
    try:
        refused_without_passwd(attack(out, sql.format(link=link)))
        relative = os.path.relpath(link)
        refused_without_passwd(attack(out, sql.format(link=relative)))
    finally:
        link.unlink()


def test_a_link_at_the_temp_folder_is_defused_without_verification(out: Path) -> None:
    """The nightly report reads the catalog in its staging folder, before the manifest
    exists: there too DuckDB's temporary folder is the process's own."""
    link = out / "audit.duckdb.tmp"
    link.symlink_to("/")
    try:
        catalog = open_catalog(out, being_written=True)
        try:
            with pytest.raises(QueryError, match="refused"):
                query(catalog, f"SELECT content FROM read_text('{link}/etc/passwd')")
        finally:
            catalog.close()
    finally:
        link.unlink()


@pytest.mark.parametrize("where", ["outdir_sibling", "in_outdir", "in_dataset"])
def test_links_planted_beside_or_inside_read_nothing(runs: Path, where: str) -> None:
    link = {
        "outdir_sibling": runs / "out.tmp",
        "in_outdir": runs / "out" / "escape",
        "in_dataset": runs / "data" / "escape",
    }[where]
    link.symlink_to("/")
    try:
        sql = f"SELECT content FROM read_text('{link}/etc/passwd')"
        refused_without_passwd(attack(runs / "out", sql))
        through_outdir = f"SELECT content FROM read_text('{runs}/out/../{link.name}/etc/passwd')"
        refused_without_passwd(attack(runs / "out", through_outdir))
    finally:
        link.unlink()


def test_the_temp_folder_is_private_and_gone_after_close(out: Path) -> None:
    catalog = open_catalog(out)
    try:
        scratch = catalog.scratch
        assert scratch is not None and scratch.is_dir() and not scratch.is_symlink()
        assert stat.S_IMODE(scratch.stat().st_mode) == 0o700
        row = catalog.con.execute(
            "SELECT current_setting('temp_directory'), current_setting('allowed_directories')"
        ).fetchall()[0]
        assert row[0] == str(scratch)
        allowed = [Path(folder) for folder in row[1]]
        # Each admitted folder is its own resolved path: ours, OUTDIR, the dataset.
        assert all(folder == folder.resolve() for folder in allowed)
        assert set(allowed) == {scratch, out.resolve(), (out.parent / "data").resolve()}
        assert not (out / "audit.duckdb.tmp").exists()
    finally:
        catalog.close()
    assert not scratch.exists()


@pytest.mark.parametrize("leads_to", ["root", "the_moved_files"])
def test_a_dataset_folder_swapped_for_a_link_is_not_admitted(tmp_path: Path, leads_to: str) -> None:
    data = write_tables(tmp_path / "data", base_rows())
    run_audit(data, tmp_path / "out")
    moved = tmp_path / "moved"
    shutil.move(data, moved)
    # The folder the catalog names now leads elsewhere: to the root, or to the audited
    # files themselves (same names and sizes); admitted neither way.
    data.symlink_to("/" if leads_to == "root" else moved)
    catalog = open_catalog(tmp_path / "out")
    try:
        allowed = catalog.con.execute("SELECT current_setting('allowed_directories')").fetchall()[
            0
        ][0]
        assert "/" not in allowed and f"{data}/" not in allowed and f"{moved}/" not in allowed
        assert catalog.missing  # named as moved, not read
        with pytest.raises(QueryError, match=r"refused|no longer as audited"):
            query(catalog, f"SELECT content FROM read_text('{data}/etc/passwd')")
        with pytest.raises(QueryError, match="no longer as audited"):
            query(catalog, "SELECT count(*) FROM rounds")
    finally:
        catalog.close()


# ---- 2. limits -----------------------------------------------------------------------


@pytest.mark.e2e
def test_a_statement_past_the_timeout_stops_with_exit_2(out: Path, tmp_path: Path) -> None:
    started = time.monotonic()
    finished = subprocess.run(
        [*auditor_command(), "query", str(out), ENDLESS, "--timeout", "2"],
        capture_output=True,
        text=True,
        timeout=60,
        env=child_environment(tmp_path),
    )
    elapsed = time.monotonic() - started
    assert finished.returncode == 2, finished.stderr
    assert finished.stderr == "error: query stopped after 2 s (--timeout)\n"
    assert 2 <= elapsed < 15  # the 2 s, start-up and a loaded machine's slack


def test_the_timeout_is_per_statement_in_the_library(out: Path) -> None:
    catalog = open_catalog(out, timeout=1)
    try:
        started = time.monotonic()
        with pytest.raises(QueryError, match=r"query stopped after 1 s \(--timeout\)"):
            query(catalog, ENDLESS)
        assert time.monotonic() - started < 5
        # The connection is usable after an interrupt.
        assert query(catalog, "SELECT 42 AS a")[0].column("a").to_pylist() == [42]
    finally:
        catalog.close()


def test_a_statement_past_the_memory_limit_stops_with_exit_2(out: Path) -> None:
    result = wide("query", str(out), HUNGRY, "--memory-limit", "100MB")
    assert result.exit_code == 2, result.output
    assert result.output.startswith("error: query stopped: it exceeded --memory-limit 100MB (")
    assert result.output.count("\n") == 1  # one line, without DuckDB's SET advice


def test_the_memory_limit_reaches_duckdb(out: Path) -> None:
    sql = "SELECT current_setting('memory_limit') AS m"
    default = wide("query", str(out), sql, "--format", "csv")
    assert default.output.splitlines() == ["m", "2.0 GiB"]
    small = wide("query", str(out), sql, "--format", "csv", "--memory-limit", "300MB")
    assert small.output.splitlines() == ["m", "300.0 MiB"]
    wrong = wide("query", str(out), "SELECT 1", "--memory-limit", "lots")
    assert wrong.exit_code == 2 and "expected a size such as 2GB" in wrong.output


# ---- 3. Ctrl-C -------------------------------------------------------------------------


@pytest.mark.e2e
def test_ctrl_c_stops_a_running_statement_with_exit_130(out: Path, tmp_path: Path) -> None:
    process = subprocess.Popen(
        [*auditor_command(), "query", str(out), ENDLESS, "--timeout", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=child_environment(tmp_path),
        preexec_fn=default_sigint,
    )
    try:
        wait_until_busy(process)
        sent = time.monotonic()
        process.send_signal(signal.SIGINT)
        _, stderr = process.communicate(timeout=10)
        stopped_within = time.monotonic() - sent
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert process.returncode == 130, stderr
    assert stderr == "error: query interrupted (Ctrl-C)\n"
    assert stopped_within < 3


class Terminal:
    """A command run at a real terminal (a pseudo-terminal): it reads from a tty, and the
    terminal turns a typed Ctrl-C (\\x03) into SIGINT for it."""

    def __init__(self, args: list[str], home: Path) -> None:
        pid, fd = pty.fork()
        if pid == 0:  # the child: never returns into pytest
            try:
                default_sigint()
                os.execve(args[0], args, child_environment(home))
            finally:
                os._exit(127)
        self.pid, self.fd = pid, fd
        # Wide, so that rich does not fold an escaped value across lines.
        fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", 50, 200, 0, 0))
        self.seen = b""

    def type(self, text: str) -> None:
        os.write(self.fd, text.encode())

    def read_until(self, marker: bytes, limit: float = 60) -> bytes:
        """What the command printed since the last call, up to `marker` (or its end)."""
        deadline = time.monotonic() + limit
        while marker not in self.seen and time.monotonic() < deadline:
            ready, _, _ = select.select([self.fd], [], [], 0.1)
            if not ready:
                continue
            try:
                chunk = os.read(self.fd, 65536)
            except OSError:  # the command has ended
                break
            if not chunk:
                break
            self.seen += chunk
        head, found, self.seen = self.seen.partition(marker)
        return head + found

    def exit_code(self, limit: float = 30) -> int:
        deadline = time.monotonic() + limit
        while time.monotonic() < deadline:
            pid, status = os.waitpid(self.pid, os.WNOHANG)
            if pid:
                os.close(self.fd)
                return os.waitstatus_to_exitcode(status)
            self.read_until(b"\x00", 0.1)  # keep the terminal drained
        os.kill(self.pid, signal.SIGKILL)
        os.waitpid(self.pid, 0)
        os.close(self.fd)
        raise AssertionError("the command did not end")


@pytest.fixture
def at_terminal(tmp_path: Path) -> Iterator[list[Terminal]]:
    started: list[Terminal] = []
    yield started
    for opened in started:  # a failed test leaves no command running
        try:
            os.kill(opened.pid, signal.SIGKILL)
            os.waitpid(opened.pid, 0)
        except (ProcessLookupError, ChildProcessError):
            pass


@pytest.mark.e2e
def test_ctrl_c_at_a_terminal_keeps_the_prompt(
    out: Path, tmp_path: Path, at_terminal: list[Terminal]
) -> None:
    prompt = Terminal([*auditor_command(), "query", str(out), "--timeout", "0"], tmp_path)
    at_terminal.append(prompt)
    assert b"audit> " in prompt.read_until(b"audit> ")
    prompt.type(ENDLESS + ";\n")
    prompt.read_until(b"\n")  # the echo of the statement
    time.sleep(1.5)  # running
    typed = time.monotonic()
    prompt.type("\x03")
    shown = prompt.read_until(b"audit> ", limit=10)
    assert b"query interrupted (Ctrl-C)" in shown and shown.endswith(b"audit> ")
    assert time.monotonic() - typed < 3
    prompt.type("SELECT 'still here' AS after_ctrl_c;\n")
    assert b"still here" in prompt.read_until(b"audit> ")
    prompt.type(".quit\n")
    assert prompt.exit_code() == 0  # an interrupted statement is not a failed one


@pytest.mark.parametrize("interactive", [True, False])
def test_the_prompt_loop_on_a_real_sigint(out: Path, interactive: bool) -> None:
    lines = iter([ENDLESS + ";", "SELECT 7 AS after;"])
    said: list[str] = []
    shown: list[object] = []

    def read(_prompt: str) -> str:
        line = next(lines, None)
        if line is None:
            raise EOFError
        if line.startswith("SELECT count(*)"):  # Ctrl-C a second into this one
            pid = os.getpid()
            threading.Timer(1.0, os.kill, (pid, signal.SIGINT)).start()
        return line

    catalog = open_catalog(out)
    try:
        if interactive:
            assert prompt_loop(catalog, read, shown.append, said.append, True) == 0
            assert said == ["query interrupted (Ctrl-C)"]
            assert len(shown) == 1  # the next statement ran
        else:
            with pytest.raises(QueryInterrupted):
                prompt_loop(catalog, read, shown.append, said.append, False)
            assert shown == []
    finally:
        catalog.close()


# ---- 4. 5. the prompt's exit status, --output ------------------------------------------


def test_a_piped_prompt_exits_2_when_a_statement_failed(out: Path) -> None:
    good = wide("query", str(out), stdin="SELECT 1 AS one;\n.tables\n")
    assert good.exit_code == 0, good.output
    for failing in ("DROP VIEW rounds;", "SELECT * FROM nowhere;", ".schema nowhere", ".nope"):
        result = wide("query", str(out), stdin=f"{failing}\nSELECT 'went on' AS after;\n")
        assert result.exit_code == 2, (failing, result.output)
        assert "error: " in result.output and "went on" in result.output


def test_output_into_a_missing_folder_is_one_message(out: Path, tmp_path: Path) -> None:
    target = tmp_path / "no" / "such" / "folder" / "rounds.csv"
    result = wide("query", str(out), "SELECT 1 AS a", "--format", "csv", "--out", str(target))
    assert result.exit_code == 2
    assert result.output == f"error: --out {target}: there is no folder {target.parent}\n"
    assert not (tmp_path / "no").exists()


# ---- 6. data that would drive the terminal -------------------------------------------


def test_visible_escapes_controls_and_bidi_only() -> None:
    assert visible(TITLE_AND_CLEAR) == "\\x1b]0;pwn\\x07\\x1b[2J"
    assert visible(REVERSED) == "abc\\u202edef"
    for char in ("\x00", "\x08", "\x0b", "\x7f", "\x85", "\x9b"):  # C0, DEL, C1
        assert visible(char) == f"\\x{ord(char):02x}"
    for char in ("\u061c", "\u200e", "\u200f", "\u202a", "\u202d", "\u2066", "\u2069", "\u2028"):
        assert visible(char) == f"\\u{ord(char):04x}"
    assert visible("a\nb\tc\rd") == "a\\nb\\tc\\rd"  # a table cell: one line
    assert visible("a\nb\tc\rd", lines=True) == "a\nb\tc\\rd"  # a message: its lines
    ordinary = "Zoë 9♥ 日本 👍🏽 \\x1b (already text)"
    assert visible(ordinary) == ordinary


def assert_escaped(text: str) -> None:
    assert "\x1b" not in text and "\u202e" not in text and "\x07" not in text, repr(text)


def test_query_tables_and_errors_escape_the_data(out: Path) -> None:
    sql = "SELECT DISTINCT dealer_id, patron_id FROM wagers JOIN rounds USING (round_id)"
    table = wide("query", str(out), sql)
    assert table.exit_code == 0, table.output
    assert "\\x1b]0;pwn\\x07\\x1b[2J" in table.output and "abc\\u202edef" in table.output
    assert_escaped(table.output)
    # DuckDB quotes the value it could not convert: the message is escaped too.
    error = wide("query", str(out), "SELECT CAST(dealer_id AS INTEGER) FROM rounds")
    assert error.exit_code == 2 and "\\x1b]0;pwn" in error.output
    assert_escaped(error.output)
    piped_prompt = wide(
        "query", str(out), stdin=f"{sql};\nSELECT CAST(dealer_id AS INT) FROM rounds;"
    )
    assert "\\x1b]0;pwn" in piped_prompt.output and "abc\\u202edef" in piped_prompt.output
    assert_escaped(piped_prompt.output)


@pytest.mark.parametrize("fmt", ["csv", "json"])
def test_machine_formats_keep_the_data_when_piped(out: Path, fmt: str) -> None:
    sql = "SELECT DISTINCT dealer_id FROM rounds"
    result = wide("query", str(out), sql, "--format", fmt)
    assert result.exit_code == 0
    # csv as is; json with its own escape for ESC (\u001b), and U+202E as is.
    assert TITLE_AND_CLEAR in result.output or "\\u001b]0;pwn\\u0007" in result.output
    patron = wide("query", str(out), "SELECT DISTINCT patron_id FROM wagers", "--format", fmt)
    assert REVERSED in patron.output


@pytest.mark.e2e
@pytest.mark.parametrize("fmt", ["csv", "json", "table"])
def test_every_format_is_escaped_at_a_terminal(
    out: Path, tmp_path: Path, at_terminal: list[Terminal], fmt: str
) -> None:
    sql = "SELECT DISTINCT dealer_id, patron_id FROM wagers JOIN rounds USING (round_id)"
    command = Terminal([*auditor_command(), "query", str(out), sql, "--format", fmt], tmp_path)
    at_terminal.append(command)
    shown = command.read_until(b"\x00").decode()
    assert command.exit_code() == 0, shown
    assert "abc\\u202edef" in shown and "\u202e" not in shown
    assert "]0;pwn" in shown and "\x1b]0;pwn" not in shown and "\x1b[2J" not in shown
    assert "\x07" not in shown


def test_validate_escapes_the_quarantine_digest(runs: Path) -> None:
    result = wide("validate", str(runs / "data"))
    assert result.exit_code == 1, result.output
    assert "abc\\u202edefW3" in result.output and "bet=\\x1b]0;pwn\\x07\\x1b[2J" in result.output
    assert_escaped(result.output)


def test_diff_escapes_its_table(runs: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(terminal.stdout, "width", 200)  # no folding inside a cell
    result = wide("diff", str(runs / "out"), str(runs / "clean_out"))
    assert result.exit_code == 1, result.output
    assert "\\x1b]0;pwn\\x07\\x1b[2JW2" in result.output
    assert_escaped(result.output)
