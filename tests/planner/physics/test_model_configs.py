"""Model facts from Hugging Face config.json files: parameter counts against the model cards,
attention kinds and KV cache per token, names that resolve, and configs that cannot be read."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from planner.physics import catalog
from planner.physics.catalog import add_config, entries, forget_added, model_facts, resolve
from planner.physics.config import facts_from_config, read_config
from planner.physics.config_layers import ConfigError
from planner.physics.models import bytes_per_weight, canonical_precision

# (name, total B, active B) as each model card states them. Active counts differ in whether
# they include the embedding tables; the check allows for that (5%).
CARDS = [
    ("deepseek-ai/DeepSeek-V3", 671, 37),
    ("deepseek-ai/DeepSeek-R1", 671, 37),
    ("moonshotai/Kimi-K2-Instruct", 1040, 32),
    ("Qwen/Qwen3-235B-A22B", 235, 22),
    ("Qwen/Qwen3-30B-A3B", 30.5, 3.3),
    ("Qwen/Qwen3-Coder-480B-A35B-Instruct", 480, 35),
    ("openai/gpt-oss-120b", 116.8, 5.1),
    ("openai/gpt-oss-20b", 20.9, 3.6),
    ("mistralai/Mixtral-8x7B-v0.1", 46.7, 12.9),
    ("mistralai/Mixtral-8x22B-v0.1", 141, 39),
    ("meta-llama/Llama-4-Scout-17B-16E-Instruct", 109, 17),
    ("meta-llama/Llama-4-Maverick-17B-128E-Instruct", 400, 17),
    ("MiniMaxAI/MiniMax-M2.7", 230, 10),
    ("Qwen/Qwen3.5-122B-A10B", 122, 10),
    ("Qwen/Qwen3.5-35B-A3B", 35, 3),
    ("nvidia/NVIDIA-Nemotron-3-Nano-30B-A3B-BF16", 31.6, 3.2),
    ("nvidia/NVIDIA-Nemotron-3-Super-120B-A12B-FP8", 120, 12),
    ("meta-llama/Llama-3.1-405B", 405, 405),
    ("meta-llama/Llama-3.1-70B", 70.6, 70.6),
    ("meta-llama/Llama-3.1-8B", 8.0, 8.0),
    ("Qwen/Qwen3-32B", 32.8, 32.8),
]


@pytest.mark.parametrize(("name", "total", "active"), CARDS)
def test_parameter_counts_match_the_model_cards(name: str, total: float, active: float) -> None:
    facts = model_facts(name)
    assert facts is not None, resolve(name)
    assert facts.total_params / 1e9 == pytest.approx(total, rel=0.025)
    without_table = (facts.active_params - facts.embedding_params) / 1e9
    assert min(abs(facts.active_params / 1e9 - active), abs(without_table - active)) <= (
        0.05 * active + 0.05
    )


def test_every_shipped_config_reads() -> None:
    problems = [(e.model, e.problem) for e in entries() if e.problem]
    assert problems == []
    assert len(entries()) >= 55  # 86 files, quantised copies of one model counted once


def test_mla_caches_one_latent_per_layer_not_k_and_v_per_head() -> None:
    facts = model_facts("DeepSeek-R1")
    assert facts is not None and facts.attention.startswith("61 MLA")
    assert facts.kv_elements_per_token == 61 * (512 + 64)
    # 128 heads x (128 + 128) per layer were it plain multi-head attention: 57x more
    assert facts.kv_bytes_per_token(1.0) < 61 * 128 * 256 / 50


def test_sliding_window_layers_stop_growing_past_the_window() -> None:
    facts = model_facts("openai/gpt-oss-120b")
    assert facts is not None and facts.window_tokens == 128
    per_layer = 2 * 8 * 64
    assert facts.kv_elements(100) == 36 * per_layer * 100
    assert facts.kv_elements(10_000) == 18 * per_layer * 10_000 + 18 * per_layer * 128


def test_linear_attention_layers_hold_a_fixed_state_not_a_cache() -> None:
    facts = model_facts("Qwen/Qwen3.5-122B-A10B")
    assert facts is not None
    assert facts.kv_elements_per_token == 12 * 2 * 2 * 256  # only the 12 full-attention layers
    assert facts.state_elements_per_seq > 0 and facts.state_bytes_per_element == 4.0


def test_moe_top_k_and_dense_layers_first() -> None:
    facts = model_facts("deepseek-v3")
    assert facts is not None
    assert (facts.experts, facts.top_k, facts.moe_layers) == (256, 8, 58)
    assert facts.expert_share == pytest.approx(8 / 256)


def test_checkpoint_precision_and_its_16_bit_parts() -> None:
    oss = model_facts("gpt-oss-120b")
    assert oss is not None and oss.checkpoint == "mxfp4"
    assert "attention" in oss.sixteen_bit_parts
    parts = oss.part_bytes("mxfp4")
    assert parts is not None
    assert parts.attention == oss.attention_params * 2.0  # the checkpoint keeps attention BF16
    assert parts.experts == oss.expert_params * 0.53125  # 4 bits + one 8-bit scale per 32
    assert model_facts("DeepSeek-R1").checkpoint == "fp8"  # type: ignore[union-attr]


@pytest.mark.parametrize(
    "name",
    [
        "Llama-3.1-70B (nvidia FP8 ckpt)",
        "meta-llama/Meta-Llama-3.1-70B-Instruct",
        "RedHatAI/Llama-3.1-70B-Instruct-FP8",
        "llama_3.1_70b fp-8",
        "meta-llama/Llama-3.3-70B-Instruct",
    ],
)
def test_a_name_resolves_through_suffixes_and_aliases(name: str) -> None:
    facts = model_facts(name)
    assert facts is not None and facts.total_params == 70_553_706_496


@pytest.mark.parametrize(
    ("spelling", "name"),
    [("FP-8", "fp8"), ("fp8_e4m3", "fp8"), ("BFloat16", "bf16"), ("NVFP4", "nvfp4")],
)
def test_precision_spellings(spelling: str, name: str) -> None:
    assert canonical_precision(spelling) == name
    assert bytes_per_weight(spelling) is not None


def test_an_unknown_model_says_which_and_how_to_add_it() -> None:
    found = resolve("acme/Frobnicator-9000")
    assert isinstance(found, str)
    assert "'acme/Frobnicator-9000'" in found and "capplan models add" in found


def test_a_config_missing_a_field_names_it(tmp_path: Path) -> None:
    path = tmp_path / "config.json"
    path.write_text(json.dumps({"hidden_size": 4096, "num_attention_heads": 32}), "utf-8")
    with pytest.raises(ConfigError) as error:
        facts_from_config(read_config(path), "x", str(path))
    assert error.value.field == "num_hidden_layers" and error.value.file == str(path)


def test_an_unknown_layer_type_is_named(tmp_path: Path) -> None:
    config = json.loads((catalog.CONFIG_DIR / "openai--gpt-oss-20b_config.json").read_text())
    config["layer_types"][3] = "quantum_attention"
    with pytest.raises(ConfigError) as error:
        facts_from_config(config, "x", "mine.json")
    assert error.value.field == "layer_types" and error.value.value == "quantum_attention"


@pytest.mark.parametrize("text", ["{not json", "[1, 2]", '{"model_type": "clip"}'])
def test_a_file_that_is_not_a_language_models_config_is_refused(tmp_path: Path, text: str) -> None:
    path = tmp_path / "config.json"
    path.write_text(text, "utf-8")
    with pytest.raises(ConfigError) as error:
        facts_from_config(read_config(path), "x", str(path))
    assert str(path) in str(error.value)


def test_an_added_config_is_found_by_its_name_and_can_be_dropped() -> None:
    config = json.loads((catalog.CONFIG_DIR / "Qwen--Qwen3-8B_config.json").read_text())
    try:
        facts = add_config(config, "/tmp/my-model/config.json", name="acme/Qwen3-8B-Tuned")
        assert resolve("acme/qwen3-8b-tuned-fp8") == facts
        assert any(e.origin == "added" and e.model == "qwen3-8b-tuned" for e in entries())
    finally:
        forget_added()
    assert model_facts("acme/Qwen3-8B-Tuned") is None
