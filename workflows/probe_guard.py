"""What a probe started from the app may do (docs/SECURITY.md): reach only the hosts and ports an
operator lists in CAPPLAN_PROBE_ALLOWED_HOSTS (loopback by default when the app runs without
sign-in, nothing with sign-in), send as its key only a variable listed in CAPPLAN_PROBE_KEY_VARS,
and never the store's URL or password or the app's own secrets. `capplan probe` is not guarded:
its operator runs it with their own environment."""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from urllib.parse import unquote, urlsplit

from errors import InputError
from measurements.probe.outbound import (
    ALLOWED_HOSTS_ENV,
    LOOPBACK_RULES,
    AllowList,
    Outbound,
    Resolve,
    check_url,
    parse_allowed_hosts,
    resolve_host,
)
from measurements.probe.request import ProbeRequest

KEY_VARS_ENV = "CAPPLAN_PROBE_KEY_VARS"
# Never a probe key from the app, whatever an operator lists: the store and the app's own settings.
NEVER_KEY_VARS = frozenset({"DATABASE_URL", "PGPASSWORD", "PGPASSFILE", "PGSERVICEFILE"})
NEVER_KEY_PREFIXES = ("CAPPLAN_", "STREAMLIT_", "PG")


@dataclass(frozen=True, slots=True)
class AppProbePolicy:
    """The app's leash on the probe: the hosts it may reach, the variables it may send as a
    key, and values (the store URL, its password, the app's secrets) it never sends."""

    allowed: AllowList
    key_vars: frozenset[str]
    protected: frozenset[str]


def app_policy(
    environ: Mapping[str, str], *, sign_in: bool, store_url: str, secrets: Iterable[str] = ()
) -> AppProbePolicy:
    """The policy the operator's settings give; InputError naming the setting when one is bad."""
    hosts = environ.get(ALLOWED_HOSTS_ENV, "").strip()
    if not hosts and not sign_in:
        allowed = parse_allowed_hosts(LOOPBACK_RULES)
    else:
        allowed = parse_allowed_hosts(hosts)
    names = {part.strip() for part in environ.get(KEY_VARS_ENV, "").split(",") if part.strip()}
    password = unquote(urlsplit(store_url).password or "") if "://" in store_url else ""
    protected = {store_url, password, environ.get("PGPASSWORD", ""), *secrets}
    return AppProbePolicy(
        allowed=allowed,
        key_vars=frozenset(names),
        protected=frozenset(value for value in protected if value),
    )


def guard(
    request: ProbeRequest,
    policy: AppProbePolicy,
    *,
    environ: Mapping[str, str] = os.environ,
    resolve: Resolve = resolve_host,
) -> Outbound:
    """Check an app request before anything is sent: no launch, a listed key variable, an
    allowed host (its addresses checked); the Outbound that connects to those addresses only."""
    if request.launch_command is not None or request.base_url is None:
        raise InputError(
            "the app probes a running server only; launch one with `capplan probe --launch`",
            field="launch_command",
        )
    check_key_var(request.api_key_env, policy, environ)
    return Outbound(target=check_url(request.base_url.strip(), policy.allowed, resolve))


def check_key_var(name: str | None, policy: AppProbePolicy, environ: Mapping[str, str]) -> None:
    """InputError unless `name` is None or a variable the operator listed for probe keys whose
    value is none of the store's or the app's secrets."""
    if name is None:
        return
    if name.upper() in NEVER_KEY_VARS or name.upper().startswith(NEVER_KEY_PREFIXES):
        raise InputError(
            "this variable holds the app's own settings or the store's credentials: the app "
            "never sends it to a server",
            field="api_key_env",
            value=name,
        )
    if name not in policy.key_vars:
        listed = ", ".join(sorted(policy.key_vars)) or "none"
        raise InputError(
            f"the app sends as a key only the variables an operator lists in {KEY_VARS_ENV} "
            f"(now: {listed}); ask them to add {name}, or run `capplan probe` yourself",
            field="api_key_env",
            value=name,
        )
    if environ.get(name, "") in policy.protected:
        raise InputError(
            "this variable holds the store's URL or password or one of the app's secrets: "
            "the app never sends it to a server",
            field="api_key_env",
            value=name,
        )
