"""The Plan page on a scenario the store has no data for (the agent brief on the demo store):
the one-sentence verdict first, the sweeps as commands, what was found folded away, no empty
charts (AppTest on a real demo store)."""

from __future__ import annotations

from streamlit.testing.v1 import AppTest

from db import scenarios
from db.engine import make_engine
from tests.ui.conftest import APP, FIXTURES, ROOT, RUN_TIMEOUT_S

BRIEF = FIXTURES / "scenarios" / "agent-brief.yaml"
PLATFORM = ROOT / "docs" / "scenarios" / "agent-platform.yaml"


def _planned(store_url: str, name: str, text: str) -> AppTest:
    engine = make_engine(store_url)
    scenarios.save_scenario(engine, name, text)
    engine.dispose()
    at = AppTest.from_file(str(APP), default_timeout=RUN_TIMEOUT_S).run()
    at.selectbox(key="plan_saved").set_value(name).run()
    at.button(key="plan_load").click().run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def test_the_agent_brief_says_no_data_first_and_gives_the_commands(store_url: str) -> None:
    at = _planned(store_url, "agent-brief", BRIEF.read_text())
    main_warnings = [w.value for w in at.main.warning]
    # The page plans the stored model's name (the model box lists stored names).
    assert main_warnings[0].startswith("No measurements close enough to Llama-3.1-70B")
    assert " at 3000/300 " in main_warnings[0]
    assert not at.error and not at.success  # not "no option meets the SLA" in red
    code = "\n".join(block.value for block in at.code)
    assert code.count("capplan probe --launch") == 8
    assert "vllm bench serve --backend vllm" in code and "aiperf profile" in code
    assert "trtllm-serve meta-llama/Llama-3.1-70B" in code
    # The 11 refused curves are one grouped line, folded away with the rest of what was found.
    (found,) = at.expander
    assert found.label.startswith("What the stored data has")
    refused = [c.value for c in found.caption if "adjustment limit" in c.value]
    assert len(refused) == 1 and refused[0].startswith("11 curve(s) not used")
    assert not at.get("plotly_chart")  # no ranges or sensitivity of options nothing backs


def test_a_partial_gap_keeps_the_recommendation_first_and_adds_what_to_measure(
    store_url: str,
) -> None:
    at = _planned(store_url, "agent-platform", PLATFORM.read_text())
    assert at.success  # the data answers: the recommendation leads
    verdict = [w.value for w in at.main.warning if w.value.startswith("Not measured close")]
    assert verdict and "TensorRT-LLM on H100 SXM 80GB" in verdict[0]
    assert any("capplan probe --launch 'trtllm-serve" in block.value for block in at.code)
