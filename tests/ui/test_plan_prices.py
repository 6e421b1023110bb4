"""The Plan page's price pickers: any catalog row per GPU (provider, SKU, on-demand or reserved)
prices the plan, is cited as that quote, goes into the scenario YAML and is recorded with the
saved plan; loading the scenario shows the same pick."""

from __future__ import annotations

from streamlit.testing.v1 import AppTest

from db import scenarios
from db.engine import make_engine
from planner.inputs.scenario import scenario_from_yaml
from tests.ui.conftest import APP, RUN_TIMEOUT_S

H100 = "H100-SXM-80GB"
RUNPOD = "RunPod | H100 SXM5 (Secure Cloud) | on_demand"
RESERVED = "Lambda | 8x H100 SXM (reservation) | reserved"


def _plan_page() -> AppTest:
    at = AppTest.from_file(str(APP), default_timeout=RUN_TIMEOUT_S).run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def _options(at: AppTest) -> list[dict[str, object]]:
    (frame,) = [d.value for d in at.dataframe if "recommended" in d.value.columns]
    rows: list[dict[str, object]] = frame.to_dict("records")
    return rows


def test_a_picked_catalog_row_prices_the_plan_and_is_recorded(store_url: str) -> None:
    at = _plan_page()
    picker = at.selectbox(key=f"plan_price_quote_{H100}")
    labels = " / ".join(picker.options)
    assert "$2.69/GPU-h · RunPod H100 SXM5 (Secure Cloud) · on demand · 1 GPU" in labels
    assert "$1.85/GPU-h · Lambda 8x H100 SXM (reservation) · reserved · 8 GPUs" in labels
    picker.set_value(RUNPOD).run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    h100 = [o for o in _options(at) if o["gpu"] == H100]
    assert h100 and {o["usd_per_gpu_hour"] for o in h100} == {2.69}
    assert all("picked: RunPod H100 SXM5 (Secure Cloud)" in str(o["price_source"]) for o in h100)
    at.text_input(key="plan_name").set_value("runpod plan").run()
    at.button(key="plan_save").click().run()
    engine = make_engine(store_url)
    saved = scenario_from_yaml(scenarios.get_scenario(engine, "runpod plan").yaml_text, "saved")
    quote = saved.price_quote(H100)
    assert quote is not None and (quote.provider, quote.pricing_type) == ("RunPod", "on_demand")
    assert saved.on_demand_price(H100) == 2.69
    (history,) = scenarios.plan_history(engine, "runpod plan")
    recorded = scenario_from_yaml(history.scenario_yaml, "record")
    assert recorded.price_quote(H100) == quote  # the plan record keeps the pick
    assert any(e.provider == "RunPod" and e.gpu == H100 for e in history.prices_used)
    engine.dispose()
    picker = at.selectbox(key=f"plan_price_quote_{H100}")
    picker.set_value(picker.options[0]).run()  # back to the default
    at.selectbox(key="plan_saved").set_value("runpod plan").run()
    at.button(key="plan_load").click().run()
    assert not at.exception
    assert at.selectbox(key=f"plan_price_quote_{H100}").value == RUNPOD


def test_a_reserved_fleet_picks_its_reserved_quote(store_url: str) -> None:
    at = _plan_page()
    at.radio(key="plan_pricing_mode").set_value("reserved").run()
    reserved = at.selectbox(key=f"plan_price_reserved_{H100}")
    assert any("Lambda 8x H100 SXM (reservation)" in label for label in reserved.options)
    reserved.set_value(RESERVED).run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    h100 = [o for o in _options(at) if o["gpu"] == H100]
    assert h100 and {o["reserved_usd_per_gpu_hour"] for o in h100} == {1.85}
