"""The Plan page keeps a scenario's model (a twin plans on its twin's curves, a model with no
data is said so, never swapped for another) and the precision follows the model's checkpoint."""

from __future__ import annotations

from pathlib import Path

from streamlit.testing.v1 import AppTest

from planner.inputs.scenario import load_scenario
from tests.ui.conftest import APP, RUN_TIMEOUT_S, shown
from ui import plan_state

ROOT = Path(__file__).resolve().parents[2]
AGENT = ROOT / "docs" / "scenarios" / "agent-platform.yaml"


def _opened(model: str) -> AppTest:
    scenario = load_scenario(AGENT).model_copy(update={"model": model})
    at = AppTest.from_file(str(APP), default_timeout=RUN_TIMEOUT_S)
    at.query_params[plan_state.PARAM] = plan_state.encode(scenario)
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def _page_text(at: AppTest) -> str:
    parts = [*at.markdown, *at.success, *at.error, *at.warning, *at.info, *at.caption]
    return shown(" ".join(str(p.value) for p in parts))


def test_a_re_release_opens_as_itself_and_plans_on_its_twins_curves(store_url: str) -> None:
    at = _opened("meta-llama/Llama-3.3-70B-Instruct")
    assert at.selectbox(key="plan_model").value == "meta-llama/Llama-3.3-70B-Instruct"
    assert at.success, "a Llama-3.3 brief gets a recommendation from Llama-3.1's curves"
    text = _page_text(at)
    assert "same architecture" in text
    assert "Qwen" not in shown(str(at.success[0].value))


def test_a_model_without_data_is_kept_and_said_to_have_none(store_url: str) -> None:
    at = _opened("acme/Never-Measured-13B")
    assert at.selectbox(key="plan_model").value == "acme/Never-Measured-13B"
    assert not at.success
    assert "Never-Measured-13B" in _page_text(at)


def test_switching_model_moves_the_precision_to_its_checkpoint(store_url: str) -> None:
    at = AppTest.from_file(str(APP), default_timeout=RUN_TIMEOUT_S)
    at.run()
    assert at.selectbox(key="plan_precision").value == "fp8"  # Llama-3.1-70B: no bf16 measured
    at.selectbox(key="plan_model").set_value("openai/gpt-oss-120b").run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.selectbox(key="plan_precision").value == "fp4"  # its MXFP4 checkpoint
    at.selectbox(key="plan_precision").set_value("fp8").run()
    at.selectbox(key="plan_model").set_value("meta-llama/Llama-3.1-70B").run()
    assert at.selectbox(key="plan_precision").value == "fp8"
