"""Where the probe may connect when the app runs it: an operator's list of hosts and ports
(`host:port`, `host:*`, an IP or a network such as `10.0.0.0/24`), checked against the addresses
a URL's name resolves to, and a resolver that connects to the checked addresses only (a name that
resolves elsewhere between the check and the connection is never followed)."""

from __future__ import annotations

import ipaddress
import re
import socket
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from urllib.parse import urlsplit

import aiohttp
from aiohttp.abc import AbstractResolver, ResolveResult

from errors import InputError
from measurements.probe.redaction import redact_url

ALLOWED_HOSTS_ENV = "CAPPLAN_PROBE_ALLOWED_HOSTS"
LOOPBACK_RULES = "127.0.0.0/8:*,[::1]:*,localhost:*"
_Address = ipaddress.IPv4Address | ipaddress.IPv6Address
_Network = ipaddress.IPv4Network | ipaddress.IPv6Network
_HOST_NAME = re.compile(r"^[a-z0-9_]([a-z0-9_.-]*[a-z0-9_.])?$")
Resolve = Callable[[str, int], Sequence[str]]


@dataclass(frozen=True, slots=True)
class HostRule:
    """One allowed host: a DNS name (lower case) or a network, and a port (None: any port)."""

    name: str | None
    network: _Network | None
    port: int | None

    def allows_port(self, port: int) -> bool:
        """True when this rule's port is `port` or any port."""
        return self.port is None or self.port == port


@dataclass(frozen=True, slots=True)
class AllowList:
    """The hosts and ports the probe may reach, and the setting they came from."""

    rules: tuple[HostRule, ...]
    source: str = ALLOWED_HOSTS_ENV

    def allows_address(self, address: _Address, port: int, resolve: Resolve) -> bool:
        """True when `address`:`port` is a listed network or an address of a listed name."""
        for rule in self.rules:
            if not rule.allows_port(port):
                continue
            if rule.network is not None and address in rule.network:
                return True
            if rule.name is not None and address in _addresses(rule.name, port, resolve):
                return True
        return False


@dataclass(frozen=True, slots=True)
class Target:
    """A checked URL: its host and port and the addresses it may be reached at."""

    url: str
    host: str
    port: int
    addresses: tuple[str, ...]


def parse_allowed_hosts(text: str, source: str = ALLOWED_HOSTS_ENV) -> AllowList:
    """`host:port,host2:*,10.0.0.0/24:8000,[::1]:*` as an AllowList; InputError naming `source`
    and the entry for anything else (no port, a port out of range, an empty host)."""
    rules = tuple(_rule(part.strip(), source) for part in text.split(",") if part.strip())
    return AllowList(rules=rules, source=source)


def _rule(entry: str, source: str) -> HostRule:
    host, sep, port_text = entry.rpartition(":")
    if not sep or not host or (":" in host and not host.startswith("[")):
        raise InputError(
            "expected host:port or host:* (an IPv6 address in brackets, [::1]:8000)",
            field=source,
            value=entry,
        )
    port = None if port_text == "*" else _port(port_text, entry, source)
    host = host.removeprefix("[").removesuffix("]").lower()
    try:
        return HostRule(name=None, network=ipaddress.ip_network(host, strict=False), port=port)
    except ValueError:
        pass
    if not _HOST_NAME.match(host):
        raise InputError(
            "expected a host name, an IP address or a network", field=source, value=entry
        )
    return HostRule(name=host.rstrip("."), network=None, port=port)


def _port(text: str, entry: str, source: str) -> int:
    if not text.isdigit() or not 0 < int(text) < 65536:
        raise InputError("expected a port 1-65535 or *", field=source, value=entry)
    return int(text)


def resolve_host(host: str, port: int) -> list[str]:
    """Every address `host` resolves to (an IP literal: itself); [] when it resolves to none."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (OSError, UnicodeError):
        return []
    return list(dict.fromkeys(str(info[4][0]) for info in infos))


def _addresses(host: str, port: int, resolve: Resolve) -> set[_Address]:
    return {_address(text) for text in resolve(host, port)}


def _address(text: str) -> _Address:
    address = ipaddress.ip_address(text.partition("%")[0])  # fe80::1%eth0: the scope dropped
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return address.ipv4_mapped  # ::ffff:10.0.0.5 is 10.0.0.5
    return address


def check_url(url: str, allowed: AllowList, resolve: Resolve = resolve_host) -> Target:
    """The URL's host resolved and every address checked against `allowed`; InputError naming
    the URL, the host and the setting to change when any address (or the name) is not allowed."""
    parts, shown = urlsplit(url), redact_url(url)  # a password in the URL is never quoted
    host = (parts.hostname or "").lower().rstrip(".")
    try:
        port = parts.port or (443 if parts.scheme == "https" else 80)
    except ValueError as exc:
        raise InputError("the URL's port is not 0-65535", field="base_url", value=shown) from exc
    found = resolve(host, port) if host else []
    if not found:
        raise InputError(f"the host {host!r} resolves to no address", field="base_url", value=shown)
    refused = [a for a in found if not allowed.allows_address(_address(a), port, resolve)]
    if refused:
        raise InputError(_refusal(host, port, refused, allowed), field="base_url", value=shown)
    return Target(url=url, host=host, port=port, addresses=tuple(found))


def _refusal(host: str, port: int, refused: list[str], allowed: AllowList) -> str:
    at = "" if refused == [host] else f" (at {', '.join(refused[:3])})"
    listed = ", ".join(_shown(rule) for rule in allowed.rules) or "nothing"
    return (
        f"the probe may not reach host {host!r} port {port}{at}: the app reaches only the hosts "
        f"in {allowed.source} (now {listed}); an operator adds `{host}:{port}` to it"
    )


def _shown(rule: HostRule) -> str:
    host = rule.name or str(rule.network)
    host = f"[{host}]" if ":" in host else host
    return f"{host}:{'*' if rule.port is None else rule.port}"


class PinnedResolver(AbstractResolver):
    """aiohttp's resolver for one checked Target: its name gives the checked addresses, never a
    fresh lookup, and any other name is refused (no request reaches a host nobody checked)."""

    def __init__(self, target: Target) -> None:
        self.target = target

    async def resolve(
        self, host: str, port: int = 0, family: socket.AddressFamily = socket.AF_INET
    ) -> list[ResolveResult]:
        """The target's checked addresses for its own host and port; OSError for anything else."""
        if host.lower().rstrip(".") != self.target.host or port != self.target.port:
            raise OSError(f"{host}:{port} was not checked against {ALLOWED_HOSTS_ENV}")
        return [_result(host, address, port) for address in self.target.addresses]

    async def close(self) -> None:
        """Nothing to release."""


def _result(host: str, address: str, port: int) -> ResolveResult:
    family = socket.AF_INET6 if ":" in address else socket.AF_INET
    return ResolveResult(
        hostname=host, host=address, port=port, family=family, proto=0, flags=socket.AI_NUMERICHOST
    )


@dataclass(frozen=True, slots=True)
class Outbound:
    """How a probe run by the app reaches its server: only the checked Target's addresses, no
    proxy from the environment, no redirect, and a failed answer kept as its HTTP status only."""

    target: Target

    def session(self, pool: int | None = None) -> aiohttp.ClientSession:
        """An aiohttp session (made inside the event loop) that connects to the target only."""
        connector = aiohttp.TCPConnector(
            limit=pool or 0, limit_per_host=0, resolver=PinnedResolver(self.target)
        )
        return aiohttp.ClientSession(connector=connector, trust_env=False)
