"""One model identity: twins (same architecture under another name) share measurements."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import replace

import pytest

from errors import NoDataError
from planner.analysis.capacity import make_plan
from planner.inputs.prices import load_catalog_csv
from planner.physics import catalog
from planner.physics.identity import (
    checkpoint_precision,
    matching_names,
    relation,
    twin_label,
)
from planner.sizing.draws import Draws
from planner.sizing.options import SizedOption
from tests.planner.builders import scenario, silicon_curves

LLAMA_31 = "meta-llama/Llama-3.1-70B-Instruct"
LLAMA_33 = "meta-llama/Llama-3.3-70B-Instruct"
CATALOG = load_catalog_csv()
FITTED = Draws(samples=1, noise_scale=0.0)


@pytest.fixture(autouse=True)
def _no_added_configs() -> Iterator[None]:
    catalog.forget_added()
    yield
    catalog.forget_added()


@pytest.mark.parametrize(
    ("stored", "wanted"),
    [
        (LLAMA_31, LLAMA_33),
        ("deepseek-ai/DeepSeek-V3", "deepseek-ai/DeepSeek-R1"),
        ("deepseek-ai/DeepSeek-R1", "deepseek-ai/DeepSeek-V3-0324"),
    ],
)
def test_a_re_release_or_reasoning_variant_is_a_twin(stored: str, wanted: str) -> None:
    assert relation(stored, wanted) == "twin"


@pytest.mark.parametrize(
    ("stored", "wanted"),
    [
        ("meta-llama/Llama-3.1-8B-Instruct", LLAMA_33),
        ("Qwen/Qwen3-32B", "Qwen/Qwen3-30B-A3B"),
        ("openai/gpt-oss-20b", "openai/gpt-oss-120b"),
        ("acme/Unknown-70B", LLAMA_33),
    ],
)
def test_other_architectures_and_unknown_models_are_not_twins(stored: str, wanted: str) -> None:
    assert relation(stored, wanted) is None


def test_the_same_canonical_model_is_the_same_not_a_twin() -> None:
    assert relation("nvidia/Llama-3.1-8B-Instruct-FP8", "meta-llama/Llama-3.1-8B") == "same"


def test_an_added_fine_tune_config_makes_a_twin_and_forgetting_it_undoes_that() -> None:
    config = json.loads(
        next(catalog.CONFIG_DIR.glob("meta-llama--Meta-Llama-3.1-70B_*")).read_text()
    )
    assert relation(LLAMA_31, "acme/Support-Bot-70B") is None
    catalog.add_config(config, "upload", name="acme/Support-Bot-70B")
    assert relation(LLAMA_31, "acme/Support-Bot-70B") == "twin"
    catalog.forget_added()
    assert relation(LLAMA_31, "acme/Support-Bot-70B") is None


def test_matching_names_keeps_the_model_and_its_twins_only() -> None:
    names = [
        LLAMA_31,
        "meta-llama/Llama-3.1-8B-Instruct",
        "Qwen/Qwen3-32B",
        "meta-llama/Llama-3.1-70B",
    ]
    assert matching_names(names, LLAMA_33) == [LLAMA_31, "meta-llama/Llama-3.1-70B"]


def test_a_twin_plan_uses_the_twins_curves_and_says_so() -> None:
    curves = silicon_curves()
    own = make_plan(scenario(model="meta-llama/Llama-3.1-70B"), curves, CATALOG, draws=FITTED)
    twin = make_plan(scenario(model=LLAMA_33), curves, CATALOG, draws=FITTED)
    assert twin.scenario.model == LLAMA_33
    sized = [o for o in twin.options if isinstance(o, SizedOption)]
    assert sized, "the Llama-3.3 plan found no option on Llama-3.1's curves"
    assert all(twin_label("meta-llama/Llama-3.1-70B") in o.flags for o in sized)
    # The same curves, the same answer: only the label differs.
    assert [o.title() for o in twin.options] == [o.title() for o in own.options]
    assert [getattr(o, "replicas", None) for o in twin.options] == [
        getattr(o, "replicas", None) for o in own.options
    ]


def test_the_models_own_curves_win_over_a_twins_at_the_same_workload() -> None:
    curves = silicon_curves()
    relabelled = [c for c in curves if "70B" in c.key.model]
    twins = [
        replace(c, key=replace(c.key, model=LLAMA_33), run_id=(c.run_id or 0) + 10_000)
        for c in relabelled
    ]
    plan = make_plan(scenario(model=LLAMA_33), [*relabelled, *twins], CATALOG, draws=FITTED)
    sized = [o for o in plan.options if isinstance(o, SizedOption)]
    assert sized and all(o.curve.key.model == LLAMA_33 for o in sized)
    assert not any("same architecture" in flag for o in sized for flag in o.flags)


def test_the_precision_follows_the_checkpoint_where_it_was_measured() -> None:
    assert checkpoint_precision("openai/gpt-oss-120b", ["fp8", "fp4"]) == "fp4"
    assert checkpoint_precision("Qwen/Qwen3-32B", ["bf16", "fp8"]) == "bf16"
    assert checkpoint_precision("meta-llama/Llama-3.1-70B", ["fp8", "fp4"]) is None
    assert checkpoint_precision("acme/Unknown-70B", ["fp8"]) is None


def test_a_precision_that_leaves_the_models_curves_out_is_the_stated_reason() -> None:
    with pytest.raises(NoDataError) as refused:
        make_plan(scenario(precision="fp4"), silicon_curves(), CATALOG, draws=FITTED)
    assert str(refused.value).startswith("The scenario asks for FP4: this model's curves measured")
    assert "at FP8 were not used" in str(refused.value)
