"""The probe's allow-list: parsing an operator's hosts, checking a URL's resolved addresses, and
connecting to the checked addresses only (a real aiohttp session against a local server)."""

from __future__ import annotations

import asyncio
import ipaddress
import threading
from collections.abc import Callable, Iterator, Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import aiohttp
import pytest

from errors import InputError
from measurements.probe.outbound import (
    LOOPBACK_RULES,
    Outbound,
    PinnedResolver,
    Target,
    check_url,
    parse_allowed_hosts,
)


def dns(table: dict[str, list[str]]) -> Callable[[str, int], Sequence[str]]:
    """A resolver from a table: an IP literal resolves to itself, an unknown name to nothing."""

    def resolve(host: str, port: int) -> Sequence[str]:
        try:
            return [str(ipaddress.ip_address(host))]
        except ValueError:
            return table.get(host, [])

    return resolve


def test_entries_parse_to_names_networks_and_ports() -> None:
    allowed = parse_allowed_hosts(" GPU-box:8000, 10.0.0.0/24:*,[::1]:9000,,192.168.1.7:443 ")
    rules = [(r.name, str(r.network) if r.network else None, r.port) for r in allowed.rules]
    assert rules == [
        ("gpu-box", None, 8000),
        (None, "10.0.0.0/24", None),
        (None, "::1/128", 9000),
        (None, "192.168.1.7/32", 443),
    ]
    assert parse_allowed_hosts("").rules == ()


@pytest.mark.parametrize(
    "entry", ["gpu-box", "gpu-box:", "gpu-box:0", "gpu-box:70000", "::1:80", ":80", "a b:80"]
)
def test_a_bad_entry_is_refused_naming_the_setting_and_the_entry(entry: str) -> None:
    with pytest.raises(InputError) as caught:
        parse_allowed_hosts(f"ok:80,{entry}")
    assert caught.value.field == "CAPPLAN_PROBE_ALLOWED_HOSTS" and caught.value.value == entry


def test_a_listed_name_or_address_is_allowed_on_its_port_only() -> None:
    allowed = parse_allowed_hosts("gpu-box:8000,10.0.1.0/24:*")
    resolve = dns({"gpu-box": ["10.0.0.5"], "alias": ["10.0.0.5"]})
    target = check_url("http://gpu-box:8000/v1", allowed, resolve)
    assert target == Target("http://gpu-box:8000/v1", "gpu-box", 8000, ("10.0.0.5",))
    assert check_url("http://alias:8000", allowed, resolve).addresses == ("10.0.0.5",)
    assert check_url("https://10.0.1.9", allowed, resolve).port == 443
    with pytest.raises(InputError, match="port 8001"):
        check_url("http://gpu-box:8001", allowed, resolve)


def test_a_name_that_resolves_to_an_address_not_allowed_is_refused() -> None:
    allowed = parse_allowed_hosts(LOOPBACK_RULES)
    resolve = dns({"localhost": ["127.0.0.1", "::1"], "metadata.evil": ["169.254.169.254"]})
    assert check_url("http://localhost:8000", allowed, resolve).addresses == ("127.0.0.1", "::1")
    with pytest.raises(InputError) as caught:
        check_url("http://metadata.evil/latest", allowed, resolve)
    message = str(caught.value)
    assert "'metadata.evil'" in message and "169.254.169.254" in message
    assert "CAPPLAN_PROBE_ALLOWED_HOSTS" in message and "http://metadata.evil/latest" in message


def test_one_address_not_allowed_among_several_refuses_the_name() -> None:
    allowed = parse_allowed_hosts("10.0.0.5:80")
    resolve = dns({"split": ["10.0.0.5", "10.9.9.9"]})
    with pytest.raises(InputError, match=r"10\.9\.9\.9"):
        check_url("http://split", allowed, resolve)


@pytest.mark.parametrize(
    "url", ["http://[::ffff:169.254.169.254]:80", "http://0.0.0.0:8000", "http://nowhere:80"]
)
def test_loopback_only_refuses_what_is_not_loopback(url: str) -> None:
    with pytest.raises(InputError):
        check_url(url, parse_allowed_hosts(LOOPBACK_RULES), dns({}))


def test_an_empty_list_refuses_everything() -> None:
    with pytest.raises(InputError, match=r"now nothing"):
        check_url("http://127.0.0.1:8000", parse_allowed_hosts(""), dns({}))


def test_the_pinned_resolver_gives_the_checked_addresses_and_refuses_other_names() -> None:
    resolver = PinnedResolver(Target("http://gpu-box:8000", "gpu-box", 8000, ("10.0.0.5",)))
    (result,) = asyncio.run(resolver.resolve("GPU-box", 8000))
    assert result["host"] == "10.0.0.5" and result["port"] == 8000
    for host, port in [("other", 8000), ("gpu-box", 8001)]:
        with pytest.raises(OSError, match="not checked"):
            asyncio.run(resolver.resolve(host, port))


@pytest.fixture
def local_server() -> Iterator[int]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: object) -> None:
            """Quiet."""

        def do_GET(self) -> None:
            self.send_response(200)
            self.send_header("Content-Length", "2")
            self.end_headers()
            self.wfile.write(b"ok")

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server.server_address[1]
    server.shutdown()
    server.server_close()


def test_a_session_connects_to_the_checked_address_without_a_fresh_lookup(
    local_server: int,
) -> None:
    # "rebound.invalid" exists in no DNS: the session can only reach the server through the
    # address checked before (a name rebound after the check is never looked up again).
    outbound = Outbound(Target("x", "rebound.invalid", local_server, ("127.0.0.1",)))

    async def fetch(url: str) -> str:
        async with outbound.session() as session, session.get(url) as answer:
            return await answer.text()

    assert asyncio.run(fetch(f"http://rebound.invalid:{local_server}/")) == "ok"
    with pytest.raises(aiohttp.ClientConnectorError):
        asyncio.run(fetch(f"http://localhost:{local_server}/"))


def test_a_password_in_a_refused_url_is_never_quoted() -> None:
    with pytest.raises(InputError) as caught:
        check_url(
            "http://me:s3cret-pass@evil:80/v1", parse_allowed_hosts(""), dns({"evil": ["10.1.1.1"]})
        )
    assert "s3cret-pass" not in str(caught.value) and "'evil'" in str(caught.value)
