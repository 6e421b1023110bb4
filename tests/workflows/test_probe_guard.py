"""The app's leash on the probe: which hosts and key variables its settings allow, and that
the store's and the app's secrets are never a key, whatever an operator lists."""

from __future__ import annotations

from pathlib import Path

import pytest

from errors import InputError
from measurements.probe.request import ProbeRequest
from workflows.probe_guard import app_policy, check_key_var, guard

STORE = "postgresql+psycopg://capplan:p%40ss-word-42@db.internal/capplan"


def _request(base_url: str = "http://127.0.0.1:8000", key: str | None = None) -> ProbeRequest:
    return ProbeRequest(
        base_url=base_url,
        model="m",
        isl_tokens=8,
        osl_tokens=8,
        concurrencies=(1,),
        out_path=Path("run.json"),
        api_key_env=key,
    )


def test_without_sign_in_loopback_is_allowed_by_default() -> None:
    policy = app_policy({}, sign_in=False, store_url=STORE)
    assert guard(_request(), policy).target.addresses == ("127.0.0.1",)
    with pytest.raises(InputError, match="CAPPLAN_PROBE_ALLOWED_HOSTS"):
        guard(_request("http://10.0.0.5:8000"), policy)


def test_with_sign_in_nothing_is_allowed_until_listed() -> None:
    with pytest.raises(InputError, match=r"now nothing"):
        guard(_request(), app_policy({}, sign_in=True, store_url=STORE))
    listed = {"CAPPLAN_PROBE_ALLOWED_HOSTS": "10.0.0.5:8000"}
    policy = app_policy(listed, sign_in=True, store_url=STORE)
    assert guard(_request("http://10.0.0.5:8000"), policy).target.port == 8000
    with pytest.raises(InputError):
        guard(_request(), policy)  # the list replaces the loopback default


def test_a_bad_setting_is_an_error_naming_it() -> None:
    with pytest.raises(InputError) as caught:
        app_policy({"CAPPLAN_PROBE_ALLOWED_HOSTS": "gpu-box"}, sign_in=True, store_url=STORE)
    assert caught.value.field == "CAPPLAN_PROBE_ALLOWED_HOSTS"


@pytest.mark.parametrize("name", ["PGPASSWORD", "CAPPLAN_DB", "DATABASE_URL", "STREAMLIT_X"])
def test_the_stores_and_the_apps_variables_are_never_a_key_even_when_listed(name: str) -> None:
    environ = {"CAPPLAN_PROBE_KEY_VARS": name, name: "value"}
    policy = app_policy(environ, sign_in=False, store_url=STORE)
    with pytest.raises(InputError, match="never sends") as caught:
        check_key_var(name, policy, environ)
    assert caught.value.field == "api_key_env" and caught.value.value == name


def test_a_listed_variable_holding_a_secret_value_is_refused() -> None:
    environ = {
        "CAPPLAN_PROBE_KEY_VARS": "COPY_OF_PASSWORD,COPY_OF_URL,OIDC",
        "COPY_OF_PASSWORD": "p@ss-word-42",
        "COPY_OF_URL": STORE,
        "OIDC": "client-secret-from-secrets-toml",
    }
    policy = app_policy(environ, sign_in=True, store_url=STORE, secrets={environ["OIDC"]})
    for name in ("COPY_OF_PASSWORD", "COPY_OF_URL", "OIDC"):
        with pytest.raises(InputError, match="never sends"):
            check_key_var(name, policy, environ)


def test_only_a_listed_variable_is_a_key() -> None:
    environ = {"CAPPLAN_PROBE_KEY_VARS": " VLLM_KEY , TRT_KEY", "VLLM_KEY": "k", "OTHER": "o"}
    policy = app_policy(environ, sign_in=False, store_url=STORE)
    check_key_var("VLLM_KEY", policy, environ)
    check_key_var(None, policy, environ)
    with pytest.raises(InputError, match=r"now: TRT_KEY, VLLM_KEY"):
        check_key_var("OTHER", policy, environ)


def test_the_app_never_launches_a_server() -> None:
    request = ProbeRequest(
        launch_command="vllm serve m --port 8000",
        engine="vllm",
        model="m",
        isl_tokens=8,
        osl_tokens=8,
        concurrencies=(1,),
        out_path=Path("run.json"),
    )
    with pytest.raises(InputError, match="capplan probe --launch"):
        guard(request, app_policy({}, sign_in=False, store_url=STORE))
