"""The desk's stylesheets and its one script, served by name from the package: the
reports' `report.css` as the reports inline it, the desk's own beside it. A name not in
this list is not found; no part of a URL ever becomes a path."""

from __future__ import annotations

from importlib.resources import files

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

SERVED = {
    "report.css": ("auditor.report", "templates/report.css", "text/css"),
    "desk.css": ("auditor.desk", "static/desk.css", "text/css"),
    "desk.js": ("auditor.desk", "static/desk.js", "text/javascript"),
}


def _read(name: str) -> bytes:
    package, resource, _ = SERVED[name]
    return files(package).joinpath(resource).read_bytes()


async def static_file(request: Request) -> Response:
    name = request.path_params["name"]
    if name not in SERVED:
        return Response("Not found", status_code=404, media_type="text/plain")
    return Response(_read(name), media_type=SERVED[name][2])


def routes() -> list[Route]:
    return [Route("/static/{name}", static_file, methods=["GET"])]
