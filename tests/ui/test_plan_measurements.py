"""The Plan page on a scenario the store has no measurement at: the agent brief on the demo
store is answered by the serving model with the sweeps that would tighten it; where no curve
can answer (only the seed article's, no ISL/OSL, no TPOT) the one-sentence verdict comes first,
the sweeps as commands, what was found folded away, no empty charts (AppTest, real store)."""

from __future__ import annotations

from streamlit.testing.v1 import AppTest

from db import scenarios
from db.engine import make_engine
from team.roles import SYSTEM
from tests.ui.conftest import APP, FIXTURES, ROOT, RUN_TIMEOUT_S

BRIEF = FIXTURES / "scenarios" / "agent-brief.yaml"
PLATFORM = ROOT / "docs" / "scenarios" / "agent-platform.yaml"


def _planned(store_url: str, name: str, text: str) -> AppTest:
    engine = make_engine(store_url)
    scenarios.save_scenario(engine, name, text, actor=SYSTEM)
    engine.dispose()
    at = AppTest.from_file(str(APP), default_timeout=RUN_TIMEOUT_S).run()
    at.selectbox(key="plan_saved").set_value(name).run()
    at.button(key="plan_load").click().run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def test_the_agent_brief_is_answered_by_the_serving_model_with_the_sweeps_to_tighten_it(
    store_url: str,
) -> None:
    at = _planned(store_url, "agent-brief", BRIEF.read_text())
    assert at.success  # an answer leads: estimated, not "no data"
    verdict = [w.value for w in at.main.warning if w.value.startswith("Not measured close")]
    assert verdict and "estimated by the serving model from other workloads" in verdict[0]
    code = "\n".join(block.value for block in at.code)
    assert code.count("capplan probe --launch") == 8
    assert "vllm bench serve --backend vllm" in code and "aiperf profile" in code


def test_a_brief_no_curve_answers_says_no_data_first_and_gives_the_commands(
    store_url: str,
) -> None:
    text = BRIEF.read_text().replace(
        "engines: [vllm, tensorrt-llm], gpus: [H100-SXM-80GB, H200-SXM-141GB]",
        "engines: [tensorrt-llm], gpus: [H100-SXM-80GB]",
    )
    at = _planned(store_url, "trt-h100-brief", text)
    main_warnings = [w.value for w in at.main.warning]
    # The page plans the stored model's name (the model box lists stored names).
    assert main_warnings[0].startswith("No measurements close enough to Llama-3.1-70B")
    assert " at 3000/300 " in main_warnings[0]
    assert not at.error and not at.success  # not "no option meets the SLA" in red
    code = "\n".join(block.value for block in at.code)
    assert code.count("capplan probe --launch") == 2
    assert "trtllm-serve meta-llama/Llama-3.1-70B" in code and "aiperf profile" in code
    (found,) = at.main.expander
    assert found.label.startswith("What the stored data has")
    assert not at.get("plotly_chart")  # no ranges or sensitivity of options nothing backs


def test_a_partial_gap_keeps_the_recommendation_first_and_adds_what_to_measure(
    store_url: str,
) -> None:
    at = _planned(store_url, "agent-platform", PLATFORM.read_text())
    assert at.success  # the data answers: the recommendation leads
    verdict = [w.value for w in at.main.warning if w.value.startswith("Not measured close")]
    assert verdict and "TensorRT-LLM on H100 SXM 80GB" in verdict[0]
    assert any("capplan probe --launch 'trtllm-serve" in block.value for block in at.code)
