"""Which origins the desk's POSTs are taken from (`desk.origin`), header by header: the
desk's own host and port under every spelling a browser or a proxy gives them, and every
other site, port, scheme's default port or hidden origin refused."""

from __future__ import annotations

import pytest

from auditor.desk.origin import from_own_pages, host_of


def headers(**named: str) -> dict[bytes, bytes]:
    return {name.replace("_", "-").encode(): value.encode() for name, value in named.items()}


@pytest.mark.parametrize(
    "request_headers",
    [
        headers(origin="http://127.0.0.1:8765", host="127.0.0.1:8765"),
        headers(origin="http://[::1]:8765", host="[::1]:8765"),
        headers(origin="https://desk.example", host="desk.example"),
        # Behind a TLS proxy: the browser's https page, the Host with its port said.
        headers(origin="https://desk.example", host="desk.example:443"),
        headers(origin="https://Desk.Example:443", host="desk.example"),
        headers(origin="null", sec_fetch_site="same-origin", host="desk.example"),
        headers(sec_fetch_site="same-origin", host="desk.example"),
        headers(sec_fetch_site="none", host="desk.example"),
        headers(host="desk.example"),  # a script: no page named, the token still asked
    ],
)
def test_the_desks_own_pages_and_scripts_are_let_through(request_headers) -> None:
    assert from_own_pages(request_headers)


@pytest.mark.parametrize(
    "request_headers",
    [
        headers(origin="https://evil.example", host="desk.example"),
        headers(origin="https://desk.example.evil.example", host="desk.example"),
        headers(origin="https://evil.example", host="desk.example", sec_fetch_site="same-origin"),
        headers(origin="http://desk.example", host="desk.example:443"),  # port 80, not 443
        headers(origin="https://desk.example:8443", host="desk.example"),
        headers(origin="http://[::1]:8765", host="127.0.0.1:8765"),
        headers(origin="null", host="desk.example"),
        headers(origin="null", sec_fetch_site="cross-site", host="desk.example"),
        headers(origin="ftp://desk.example", host="desk.example"),
        headers(origin="https://desk.example/page", host="desk.example"),
        headers(origin="https://desk.example:99999", host="desk.example"),
        headers(origin="https://desk.example"),  # no Host to compare with
        headers(sec_fetch_site="cross-site", host="desk.example"),
        headers(sec_fetch_site="same-site", host="desk.example"),
    ],
)
def test_other_sites_and_hidden_origins_are_refused(request_headers) -> None:
    assert not from_own_pages(request_headers)


def test_an_origin_is_read_as_its_scheme_and_host_without_the_default_port() -> None:
    assert host_of("HTTPS://Desk.Example:443") == ("https", "desk.example")
    assert host_of("http://desk.example:8080") == ("http", "desk.example:8080")
    assert host_of("http://[::1]") == ("http", "[::1]")
    assert host_of("null") is None and host_of("") is None
