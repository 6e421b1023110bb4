"""GPU, model and engine names are cleaned where they enter: a full-width 'Ｈ' or a zero-width
space is normalised away (the name stored is the catalog's), a Cyrillic or Greek look-alike of a
catalog GPU or a known engine is refused naming both and the odd character; and a level's
completed count with no sent count is bounded. Through RunFile and `capplan import`."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from pydantic import ValidationError
from typer.testing import CliRunner

from cli import app
from measurements.entry_names import clean_name, engine_name, gpu_name, model_name
from measurements.plausible import MAX_COMPLETED_PER_LEVEL
from measurements.run_file import Deployment, Level, LoadKind

pytestmark = pytest.mark.hostile

runner = CliRunner()
ROOT = Path(__file__).resolve().parents[2]
C8 = ROOT / "tests" / "fixtures" / "vllm-cpu-real" / "c8.json"
CATALOG_GPU = "H100-SXM-80GB"
# Names that print exactly like the catalog's H100-SXM-80GB and are normalised into it.
NORMALISED = {
    "full-width H": "\uff28100-SXM-80GB",
    "zero-width space": "H100\u200b-SXM-80GB",
    "zero-width joiner": "\u200dH100-SXM-80GB",
    "byte order mark": "H100-SXM-80GB\ufeff",
    "soft hyphen": "H100-S\u00adXM-80GB",
}
# Names that only look like it: refused, naming the catalog's name and the character.
LOOKALIKES = {
    "Cyrillic EN": ("\u041d100-SXM-80GB", "1st character is U+041D CYRILLIC CAPITAL LETTER EN"),
    "Greek ETA": ("\u0397100-SXM-80GB", "1st character is U+0397 GREEK CAPITAL LETTER ETA"),
    "Cyrillic ES": ("H100-\u0405XM-80GB", "6th character is U+0405 CYRILLIC CAPITAL LETTER DZE"),
    "Cyrillic O alias": ("NVIDIA H100 80GB HBM3 \u041e", "U+041E CYRILLIC CAPITAL LETTER O"),
}


@pytest.mark.parametrize("name", NORMALISED.values(), ids=NORMALISED.keys())
def test_invisible_and_wide_characters_are_normalised_into_the_catalog_name(name: str) -> None:
    assert gpu_name(name) == CATALOG_GPU
    assert Deployment(engine="vllm", model="m", gpu=name).gpu == CATALOG_GPU


@pytest.mark.parametrize(("name", "why"), LOOKALIKES.values(), ids=LOOKALIKES.keys())
def test_a_lookalike_of_a_catalog_gpu_is_refused_naming_both(name: str, why: str) -> None:
    with pytest.raises(ValueError, match="looks like the catalog's 'H100-SXM-80GB' but is not"):
        gpu_name(name)
    with pytest.raises(ValidationError, match=re.escape(why)):
        Deployment(engine="vllm", model="m", gpu=name)


def test_the_message_quotes_the_name_and_the_character() -> None:
    with pytest.raises(ValueError) as caught:
        gpu_name("\u041d100-SXM-80GB")
    assert str(caught.value) == (
        "'\u041d100-SXM-80GB' looks like the catalog's 'H100-SXM-80GB' but is not: its 1st "
        "character is U+041D CYRILLIC CAPITAL LETTER EN"
    )


def test_engine_and_model_names_are_cleaned_and_lookalike_engines_refused() -> None:
    assert engine_name("\uff56LLM\u200b") == "vllm"
    assert clean_name("Qwen/\u200bQwen3-8B\u2060\x07") == "Qwen/Qwen3-8B"
    run = Deployment(engine="\u200bvllm", model="Qwen/Qwen3\u200b-8B", gpu=None)
    assert (run.engine, run.model) == ("vllm", "Qwen/Qwen3-8B")
    with pytest.raises(ValidationError, match=r"looks like the engine 'vllm'.*U\+043C CYRILLIC"):
        Deployment(engine="vll\u043c", model="m")
    with pytest.raises(ValidationError, match="looks like the engine 'sglang'"):
        Deployment(engine="\u0455glang", model="m")
    with pytest.raises(ValidationError, match="model must not be empty"):
        Deployment(engine="vllm", model="\u200b\u200d")


def test_a_completed_count_with_no_sent_count_is_bounded() -> None:
    fine = Level(load_kind=LoadKind.CONCURRENCY, load_value=8, completed=MAX_COMPLETED_PER_LEVEL)
    assert fine.completed == MAX_COMPLETED_PER_LEVEL
    with pytest.raises(ValidationError, match="completed 1,000,000,000 with no requests_sent"):
        Level(load_kind=LoadKind.CONCURRENCY, load_value=8, completed=10**9)
    with pytest.raises(ValidationError, match="completed but only 10 were sent"):
        Level(load_kind=LoadKind.CONCURRENCY, load_value=8, completed=11, requests_sent=10)


def _import(tmp_path: Path, source: Path, *facts: str) -> tuple[int, str, str]:
    url = f"sqlite:///{tmp_path / 'store.db'}"
    made = runner.invoke(app, ["import", str(source), *facts, "--tp", "1", "--db", url])
    listed = runner.invoke(app, ["runs", "--json", "--db", url]) if made.exit_code == 0 else None
    return made.exit_code, made.output, listed.stdout if listed is not None else ""


@pytest.mark.parametrize("name", NORMALISED.values(), ids=NORMALISED.keys())
def test_import_stores_the_catalog_name_for_a_normalised_spelling(
    tmp_path: Path, name: str
) -> None:
    code, output, listed = _import(tmp_path, C8, "--model", "m", "--engine", "vllm", "--gpu", name)
    assert code == 0, output
    assert f'"gpu": "{CATALOG_GPU}"' in listed


@pytest.mark.parametrize(("name", "why"), LOOKALIKES.values(), ids=LOOKALIKES.keys())
def test_import_refuses_a_lookalike_gpu_and_stores_nothing(
    tmp_path: Path, name: str, why: str
) -> None:
    code, output, _ = _import(tmp_path, C8, "--model", "m", "--engine", "vllm", "--gpu", name)
    assert code == 2, output
    assert "looks like the catalog's 'H100-SXM-80GB'" in output and why in output


def test_import_refuses_a_level_of_a_billion_completed_with_no_sent_count(tmp_path: Path) -> None:
    run = tmp_path / "huge.json"
    run.write_text(
        '{"schema_version": 1, "source": "probe", "provenance": "measured",'
        ' "deployment": {"engine": "vllm", "model": "m", "gpu": "H100-SXM-80GB"},'
        ' "levels": [{"load_kind": "concurrency", "load_value": 8, "completed": 1000000000}]}',
        encoding="utf-8",
    )
    code, output, _ = _import(tmp_path, run)
    assert code == 2, output
    assert "completed 1,000,000,000 with no requests_sent" in output


# A model served from a path (issue 32 item 7): the Hugging Face cache's folder names the repo id;
# any other path its last folder. A repo id stays as it is.
MODEL_PATHS = {
    "/models/models--openai--gpt-oss-120b/snapshots/b5c939de8f754692c1647ca79fbf85e8c1e70f8a": (
        "openai/gpt-oss-120b"
    ),
    "/data/hf/models--meta-llama--Llama-3.1-8B-Instruct/snapshots/0e9e39f2/": (
        "meta-llama/Llama-3.1-8B-Instruct"
    ),
    "/root/.cache/huggingface/hub/models--Qwen--Qwen3-32B": "Qwen/Qwen3-32B",
    "models--gpt2/snapshots/607a30d7": "gpt2",
    "/models/Qwen3-32B": "Qwen3-32B",
    "/models/Qwen3-32B/": "Qwen3-32B",
    "./checkpoints/my-finetune": "my-finetune",
    "~/llama-3.1-8b": "llama-3.1-8b",
    "C:\\models\\Qwen3-8B": "Qwen3-8B",
    "meta-llama/Llama-3.1-70B": "meta-llama/Llama-3.1-70B",
    "tiny-random-llama": "tiny-random-llama",
}


@pytest.mark.parametrize(("path", "name"), MODEL_PATHS.items(), ids=MODEL_PATHS.values())
def test_a_model_path_becomes_the_model_id(path: str, name: str) -> None:
    assert model_name(path) == name
    assert Deployment(engine="vllm", model=path).model == name


def test_import_stores_the_repo_id_of_a_hugging_face_cache_path(tmp_path: Path) -> None:
    served = "/models/models--openai--gpt-oss-120b/snapshots/b5c939de8f754692c1647ca79fbf85e8"
    run = tmp_path / "c8.json"
    run.write_text(C8.read_text(encoding="utf-8").replace("tiny-random-llama", served))
    code, output, listed = _import(tmp_path, run, "--engine", "vllm", "--gpu", CATALOG_GPU)
    assert code == 0, output
    assert '"model": "openai/gpt-oss-120b"' in listed and "snapshots" not in listed
