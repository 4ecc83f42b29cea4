"""`report`, `diff` and `surveil` refuse what they would get wrong, before any work:
a file named for another format than the one written, options that do not go together;
a night's report and one across nights are named apart; a period without nights is said,
not a crash. Each refusal is shown beside the case it still accepts."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from auditor.cli import main
from auditor.commands.shared_options import deprecation_note
from tests.support.cli import cli
from tests.support.paths import RULES, SAMPLE

PATRON = "PT030081"
ROUND = "R0000444"
DEALER = "D0102"
NIGHT = "2026-11-24"
PROPERTY = "MA-PROP-1"


@pytest.fixture(scope="module")
def audited(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The sample dataset audited once, into a run's OUTDIR and an archive."""
    root = tmp_path_factory.mktemp("people")
    out, archive = root / "out", root / "archive"
    done = cli("audit", SAMPLE, "--out", out, "--archive", archive)
    assert done.exit_code in (0, 1), done.output
    return {"out": out, "archive": archive}


@pytest.fixture
def here(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A working folder of the test's own, where default names land."""
    monkeypatch.chdir(tmp_path)
    return tmp_path


def listing(folder: Path) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*"))


# ---- --out named for another format ------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "pdf", "says"),
    [("x.html", True, ".pdf"), ("x.pdf", False, ".html or .htm"), ("x", False, ".html")],
)
def test_report_refuses_a_name_of_another_format(
    audited: dict[str, Path], here: Path, name: str, pdf: bool, says: str
) -> None:
    flags = ["--pdf"] if pdf else []
    refused = cli("report", audited["out"], "--patron", PATRON, "-o", here / name, *flags)
    assert refused.exit_code == 2
    assert f"--out {here / name}" in refused.output and says in refused.output
    assert listing(here) == []


def test_report_refuses_the_name_before_any_work(here: Path) -> None:
    refused = cli("report", here / "no-such-run", "--patron", PATRON, "--pdf", "-o", "x.html")
    assert refused.exit_code == 2 and "--pdf writes a PDF" in refused.output


def test_report_writes_html_under_htm_and_reaches_pdf_with_a_pdf_name(
    audited: dict[str, Path], here: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    page = here / "case.htm"
    assert cli("report", audited["out"], "--patron", PATRON, "-o", page).exit_code == 0
    assert page.read_text(encoding="utf-8").lstrip().lower().startswith("<!doctype html")
    monkeypatch.setenv("PATH", str(here))  # no browser: the name passed, Chromium is next
    printed = cli("report", audited["out"], "--patron", PATRON, "--pdf", "-o", here / "c.pdf")
    assert printed.exit_code == 2 and "headless Chromium" in printed.output


def test_diff_refuses_a_name_of_no_format_it_writes(audited: dict[str, Path], here: Path) -> None:
    refused = cli("diff", audited["out"], audited["out"], "-o", here / "diff.out")
    assert refused.exit_code == 2
    assert ".parquet, .csv, .json" in refused.output and "--format" not in refused.output
    assert listing(here) == []


def test_diff_still_writes_the_format_its_name_says(audited: dict[str, Path], here: Path) -> None:
    written = cli("diff", audited["out"], audited["out"], "-o", here / "diff.json")
    assert written.exit_code == 0, written.output
    assert (here / "diff.json").read_text(encoding="utf-8").strip() == "[]"


# ---- default names: one night and across nights -------------------------------------------


def test_a_night_and_the_nights_of_the_archive_are_named_apart(
    audited: dict[str, Path], here: Path
) -> None:
    night = cli("report", audited["out"], "--patron", PATRON)
    across = cli("report", audited["archive"], "--patron", PATRON)
    window = cli("report", audited["archive"], "--patron", PATRON, "--from", NIGHT, "--to", NIGHT)
    assert (night.exit_code, across.exit_code, window.exit_code) == (0, 0, 0), across.output
    stems = [
        f"investigation-patron-{PATRON}-across-nights-{NIGHT}-{NIGHT}",
        f"investigation-patron-{PATRON}-across-nights",
        f"investigation-patron-{PATRON}",
    ]
    # Each report with the CSVs of its rounds and wagers beside it, named apart as it is.
    assert listing(here) == sorted(
        f"{stem}{tail}" for stem in stems for tail in (".html", ".rounds.csv", ".wagers.csv")
    )


# ---- the CSVs beside a report ----------------------------------------------------------------


def test_a_csv_beside_the_report_that_would_land_in_an_output_set_is_refused(
    audited: dict[str, Path], here: Path
) -> None:
    """The rows a report leaves off go to STEM.rounds.csv and STEM.wagers.csv beside it,
    through the checks its own file goes through: a link there into a run's output set
    is followed to where the bytes would go, and refused before any work."""
    inside = audited["out"] / "planted.csv"
    (here / "case.rounds.csv").symlink_to(inside)
    refused = cli("report", audited["out"], "--patron", PATRON, "-o", here / "case.html")
    assert refused.exit_code == 2, refused.output
    assert "case.rounds.csv" in refused.output and "lies in the output set" in refused.output
    assert not inside.exists() and not (here / "case.html").exists()
    (here / "case.rounds.csv").unlink()
    written = cli("report", audited["out"], "--patron", PATRON, "-o", here / "case.html")
    assert written.exit_code == 0, written.output
    assert listing(here) == ["case.html", "case.rounds.csv", "case.wagers.csv"]


def test_a_folder_where_a_csv_goes_is_refused_before_the_report_is_built(
    audited: dict[str, Path], here: Path
) -> None:
    (here / "case.wagers.csv").mkdir()
    refused = cli("report", audited["archive"], "--dealer", DEALER, "-o", here / "case.html")
    assert refused.exit_code == 2, refused.output
    assert "case.wagers.csv is a folder" in refused.output
    assert listing(here) == ["case.wagers.csv"]


def test_the_default_names_are_in_the_help() -> None:
    shown = " ".join(cli("report", "--help").output.split())
    assert "./investigation-KIND-ID.html for an OUTDIR" in shown
    assert "./investigation-KIND-ID-across-nights.html for an ARCHIVE" in shown


# ---- options that do not go together --------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "named"),
    [
        (("--round", ROUND, "--from", NIGHT), ("--round", "--from")),
        (("--round", ROUND, "--to", NIGHT), ("--round", "--to")),
        (("--patron", PATRON, "--property", PROPERTY), ("--property", "--from")),
        (("--from", NIGHT, "--to", NIGHT), ("--from", "ARCHIVE")),
    ],
)
def test_report_of_a_night_refuses_meaningless_options(
    audited: dict[str, Path], here: Path, args: tuple[str, ...], named: tuple[str, ...]
) -> None:
    refused = cli("report", audited["out"], *args)
    assert refused.exit_code == 2
    assert all(option in refused.output for option in named)
    assert listing(here) == []


@pytest.mark.parametrize(
    ("args", "named"),
    [
        (("--period", f"{NIGHT}..{NIGHT}", "--from", NIGHT), ("--period", "--from")),
        (("--period", f"{NIGHT}..{NIGHT}", "--patron", PATRON), ("--period", "--patron")),
        (("--period", f"{NIGHT}..{NIGHT}", "--to", NIGHT), ("--period", "--to")),
        (("--property", PROPERTY), ("--property", "--from")),
        (("--patron", PATRON, "--from", NIGHT, "--property", PROPERTY), ("--property",)),
        (("--from", NIGHT), ("--from", "--to")),
        (("--to", NIGHT), ("--to", "--from")),
        (("--from", "2026-11-25", "--to", NIGHT), ("--from", "is after")),
        (("--from", NIGHT, "--to", NIGHT, "--rules", RULES), ("--rules", "ARCHIVE")),
        (("--patron", PATRON, "--rules", RULES), ("--rules", "ARCHIVE")),
        (("--patron", PATRON, "--replace-builtin"), ("--replace-builtin", "ARCHIVE")),
    ],
)
def test_report_of_an_archive_refuses_meaningless_options(
    audited: dict[str, Path], here: Path, args: tuple[str, ...], named: tuple[str, ...]
) -> None:
    refused = cli("report", audited["archive"], *args)
    assert refused.exit_code == 2
    assert all(option in refused.output for option in named)
    assert listing(here) == []


def test_report_accepts_the_options_that_go_together(audited: dict[str, Path], here: Path) -> None:
    assert cli("report", audited["out"], "--round", ROUND).exit_code == 0
    ruled = cli("report", audited["out"], "--dealer", DEALER, "--rules", RULES, "--replace-builtin")
    assert ruled.exit_code == 0, ruled.output
    windowed = cli("report", audited["out"], "--patron", PATRON, "--from", NIGHT, "--to", NIGHT)
    assert windowed.exit_code == 0, windowed.output
    period = cli(
        "report", audited["archive"], "--from", NIGHT, "--to", NIGHT, "--property", PROPERTY
    )
    assert period.exit_code == 0, period.output
    assert f"From {NIGHT}" not in (here / f"investigation-round-{ROUND}.html").read_text("utf-8")


# ---- one spelling of a period: --from and --to ----------------------------------------------


def test_from_and_to_without_a_subject_make_the_period_report(
    audited: dict[str, Path], here: Path
) -> None:
    done = cli("report", audited["archive"], "--from", NIGHT, "--to", NIGHT)
    assert done.exit_code == 0, done.output
    assert listing(here) == [f"period-{NIGHT}-{NIGHT}.html"]
    assert done.stderr == ""
    page = (here / f"period-{NIGHT}-{NIGHT}.html").read_bytes()
    old = cli("report", audited["archive"], "--period", f"{NIGHT}..{NIGHT}", "-o", "old.html")
    assert old.exit_code == 0, old.output
    assert (here / "old.html").read_bytes() == page
    assert old.stderr == deprecation_note("--period", "DATE --to DATE", new="--from") + "\n"
    assert "use --from DATE --to DATE" in old.stderr


def test_property_goes_with_the_period_report_however_asked(
    audited: dict[str, Path], here: Path
) -> None:
    new = cli("report", audited["archive"], "--from", NIGHT, "--to", NIGHT, "--property", PROPERTY)
    assert new.exit_code == 0, new.output
    assert listing(here) == [f"period-{NIGHT}-{NIGHT}-{PROPERTY}.html"]


def test_the_period_help_names_from_and_to_and_period_as_the_old_spelling() -> None:
    options = {p.name: p for p in main.commands["report"].params}
    assert options["period"].help.startswith("The old spelling of --from FROM --to TO")
    assert "period report" in options["start"].help and "period report" in options["end"].help
    shown = " ".join(cli("report", "--help").output.split())
    assert "auditor report /audits/archive --from 2026-07-01 --to 2026-09-30" in shown
    assert "--period 2026" not in shown


# ---- surveil over a period without nights ----------------------------------------------------


@pytest.fixture
def archive_copy(audited: dict[str, Path], tmp_path: Path) -> Path:
    return Path(shutil.copytree(audited["archive"], tmp_path / "archive"))


def test_surveil_of_a_period_without_nights_says_so_and_writes_nothing(archive_copy: Path) -> None:
    before = listing(archive_copy)
    done = cli("surveil", archive_copy, "--from", "2027-01-01", "--to", "2027-01-31")
    assert done.exit_code == 0, done.output
    assert "no run is in force in the period" in done.output and "nothing written" in done.output
    assert "internal error" not in done.output
    assert listing(archive_copy) == before


def test_surveil_of_a_period_with_its_night_writes_it(archive_copy: Path) -> None:
    done = cli("surveil", archive_copy, "--from", NIGHT, "--to", NIGHT)
    assert done.exit_code == 0, done.output
    assert "1 run," in done.output
    assert (archive_copy / "periods" / f"{NIGHT}_{NIGHT}").is_dir()


def test_surveil_help_says_a_period_without_nights_is_no_error() -> None:
    shown = " ".join(cli("surveil", "--help").output.split())
    assert "exit status 0 whatever is found, and for a period without nights" in shown
