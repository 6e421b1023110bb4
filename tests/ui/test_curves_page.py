"""The Curves page shows a run just imported even where no curve can be fitted (issue 32 item 5):
a request-rate run drawn by its offered rate, a one-level run as its one point with a sentence
saying why there is no curve, and never an empty chart without a reason."""

from __future__ import annotations

import base64
import json

import numpy as np
from streamlit.testing.v1 import AppTest

from db.engine import make_engine
from measurements.importers import DeploymentOverrides
from team.roles import SYSTEM
from tests.ui.conftest import APP, FIXTURES, RUN_TIMEOUT_S
from ui import resources as res
from workflows.ingest import IngestOptions, Upload, ingest

MODEL = "tiny-random-llama"
FACTS = DeploymentOverrides(engine="vllm", gpu="H100-SXM-80GB", tp=1)


def _imported(url: str, name: str) -> int:
    data = (FIXTURES / "vllm-cpu-real" / name).read_bytes()
    (outcome,) = ingest(make_engine(url), [Upload(name, data)], IngestOptions(FACTS), actor=SYSTEM)
    assert outcome.run_id is not None, outcome
    res.bump_version(url)
    return outcome.run_id


def _curves_of(model: str) -> AppTest:
    at = AppTest.from_file(str(APP), default_timeout=RUN_TIMEOUT_S).run()
    at.switch_page("ui/curves.py").run()
    at.selectbox(key="curves_model").set_value(model).run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def _figures(at: AppTest) -> list[dict[str, object]]:
    return [json.loads(chart.proto.spec) for chart in at.get("plotly_chart")]


def _title(figure: dict[str, object]) -> str:
    layout = figure["layout"]
    assert isinstance(layout, dict)
    return str(layout["title"]["text"])


def _xs(figure: dict[str, object]) -> list[list[float]]:
    """Each trace's x values (plotly writes arrays as base64 typed buffers)."""
    traces = figure["data"]
    assert isinstance(traces, list)
    return [_values(trace["x"]) for trace in traces]


def _values(raw: object) -> list[float]:
    if isinstance(raw, dict):
        buffer = base64.b64decode(raw["bdata"])
        return [float(v) for v in np.frombuffer(buffer, dtype=np.dtype(raw["dtype"]))]
    assert isinstance(raw, list)
    return [float(v) for v in raw]


def _texts(at: AppTest) -> str:
    return " ".join(str(e.value) for e in (*at.info, *at.caption, *at.markdown))


def test_a_request_rate_run_is_drawn_by_its_offered_rate(store_url: str) -> None:
    run_id = _imported(store_url, "poisson-rate40-detailed.json")
    at = _curves_of(MODEL)
    (picked,) = [m for m in at.multiselect if str(m.key).startswith("curves_runs_")]
    assert picked.value == [run_id]
    by_rate = [f for f in _figures(at) if "request rate" in _title(f)]
    assert by_rate, [_title(f) for f in _figures(at)]
    xs = {x for f in by_rate for trace in _xs(f) for x in trace}
    assert xs == {40.0}, xs
    assert "--max-concurrency" in _texts(at)


def test_a_one_level_run_shows_its_point_and_says_why_there_is_no_curve(store_url: str) -> None:
    run_id = _imported(store_url, "c8.json")
    at = _curves_of(MODEL)
    assert f"run {run_id} measured one concurrency level (8)" in _texts(at)
    figures = _figures(at)
    assert figures and all(f["data"] for f in figures), [_title(f) for f in figures]
    (throughput,) = [f for f in figures if _title(f) == "Output throughput"]
    assert _xs(throughput) == [[8.0]]
    # Its model has no config.json: no ceiling to draw against, and the page says so.
    assert "no physics ceiling" in _texts(at)
