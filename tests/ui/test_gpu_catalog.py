"""The app's GPU lists come from the GPU catalog: a GPU added as a catalog row is offered (and
preselected) in the plan form, priced in place when the store has no price for it, and listed
in the probe form and the Prices page's specs, with no code file touched."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from hardware.gpus import gpu_catalog
from reports.names import gpu_name
from tests.gpu_catalogs import MI300X, add_gpu
from tests.ui.conftest import APP, RUN_TIMEOUT_S


def test_a_catalog_gpu_is_in_the_plan_form_and_an_unpriced_one_is_an_error_in_place(
    store_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    add_gpu(tmp_path, monkeypatch)  # no price row, and the demo store has no MI300X price
    at = AppTest.from_file(str(APP), default_timeout=RUN_TIMEOUT_S).run()
    assert not at.exception, [e.value for e in at.exception]
    gpus = at.multiselect(key="plan_gpus")
    assert gpu_name(MI300X) in gpus.options and MI300X in gpus.value  # planned_by_default yes
    assert at.number_input(key=f"plan_price_{MI300X}").value is None  # no catalog default
    errors = [e.value for e in at.error]
    assert any(f"no default price for GPU '{MI300X}'" in error for error in errors), errors
    at.number_input(key=f"plan_price_{MI300X}").set_value(5.5).run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    (options,) = [d.value for d in at.dataframe if "recommended" in d.value.columns]
    mi300x = options[options["gpu"] == MI300X]
    assert len(mi300x) and set(mi300x["usd_per_gpu_hour"]) == {5.5}  # projected from H100/H200


def test_a_catalog_gpu_is_in_the_probe_form_and_the_prices_page_specs(
    store_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    add_gpu(tmp_path, monkeypatch)
    at = AppTest.from_file(str(APP), default_timeout=RUN_TIMEOUT_S).run()
    at.switch_page("ui/probe.py").run()
    assert not at.exception, [e.value for e in at.exception]
    assert list(at.selectbox(key="fact_GPU").options)[1:-1] == [
        *gpu_catalog().names()[:-1],
        MI300X,
    ]
    at.switch_page("ui/prices.py").run()
    assert not at.exception, [e.value for e in at.exception]
    specs = [d.value for d in at.dataframe if "mem_bw_tb_s" in d.value.columns]
    assert len(specs) == 1 and MI300X in set(specs[0]["gpu"])
