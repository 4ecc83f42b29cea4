"""The desk's pages: jinja2 with the reports' own templates beside the desk's, so that a
finding's evidence, a severity or a review reads as it does in the reports (their
macros), with the same filters and autoescape."""

from __future__ import annotations

import functools
from typing import Any

from jinja2 import ChoiceLoader, Environment, PackageLoader, StrictUndefined

from auditor.report.render import environment as report_environment


@functools.cache
def environment() -> Environment:
    reports = report_environment()
    env = Environment(
        loader=ChoiceLoader(
            [
                PackageLoader("auditor.desk", "templates"),
                PackageLoader("auditor.report", "templates"),
            ]
        ),
        autoescape=True,
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        finalize=reports.finalize,
    )
    env.filters.update(reports.filters)
    return env


def page(template: str, **context: Any) -> str:
    return environment().get_template(template).render(**context)
