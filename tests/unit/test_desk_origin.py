"""Which origins the desk's POSTs are taken from (`desk.origin`), header by header: the
desk's own host and port under every spelling a browser or a proxy gives them, and every
other site, port, scheme's default port or hidden origin refused."""

from __future__ import annotations

import pytest

from auditor.desk.origin import from_own_pages, host_of


def headers(**named: str) -> dict[bytes, bytes]:
    return {name.replace("_", "-").encode(): value.encode() for name, value in named.items()}


OWN = True
FOREIGN = False
CASES = [
    (OWN, headers(origin="http://127.0.0.1:8765", host="127.0.0.1:8765")),
    (OWN, headers(origin="http://[::1]:8765", host="[::1]:8765")),
    (OWN, headers(origin="https://desk.example", host="desk.example")),
    # Behind a TLS proxy: the browser's https page, the Host with its port said.
    (OWN, headers(origin="https://desk.example", host="desk.example:443")),
    (OWN, headers(origin="https://Desk.Example:443", host="desk.example")),
    (OWN, headers(origin="null", sec_fetch_site="same-origin", host="desk.example")),
    (OWN, headers(sec_fetch_site="same-origin", host="desk.example")),
    (OWN, headers(sec_fetch_site="none", host="desk.example")),
    (OWN, headers(host="desk.example")),  # a script: no page named, the token still asked
    (FOREIGN, headers(origin="https://evil.example", host="desk.example")),
    (FOREIGN, headers(origin="https://desk.example.evil.example", host="desk.example")),
    (FOREIGN, headers(origin="https://evil.example", host="desk.example",
                      sec_fetch_site="same-origin")),
    (FOREIGN, headers(origin="http://desk.example", host="desk.example:443")),  # port 80
    (FOREIGN, headers(origin="https://desk.example:8443", host="desk.example")),
    (FOREIGN, headers(origin="http://[::1]:8765", host="127.0.0.1:8765")),
    (FOREIGN, headers(origin="null", host="desk.example")),
    (FOREIGN, headers(origin="null", sec_fetch_site="cross-site", host="desk.example")),
    (FOREIGN, headers(origin="ftp://desk.example", host="desk.example")),
    (FOREIGN, headers(origin="https://desk.example/page", host="desk.example")),
    (FOREIGN, headers(origin="https://desk.example:99999", host="desk.example")),
    (FOREIGN, headers(origin="https://desk.example")),  # no Host to compare with
    (FOREIGN, headers(sec_fetch_site="cross-site", host="desk.example")),
    (FOREIGN, headers(sec_fetch_site="same-site", host="desk.example")),
]  # fmt: skip


@pytest.mark.parametrize(("own", "request_headers"), CASES)
def test_the_desks_own_pages_and_scripts_pass_and_other_sites_are_refused(
    own: bool, request_headers: dict[bytes, bytes]
) -> None:
    assert from_own_pages(request_headers) is own


def test_an_origin_is_read_as_its_scheme_and_host_without_the_default_port() -> None:
    assert host_of("HTTPS://Desk.Example:443") == ("https", "desk.example")
    assert host_of("http://desk.example:8080") == ("http", "desk.example:8080")
    assert host_of("http://[::1]") == ("http", "[::1]")
    assert host_of("null") is None and host_of("") is None
