"""Dispatch, decoding and error contract of measurements.importers (import_bytes / import_path)."""

from __future__ import annotations

import copy
import csv
import hashlib
import io
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from errors import FileTooLargeError, InputError, UnknownFormatError
from measurements import importers
from measurements.importers import (
    IMPORTERS,
    DeploymentOverrides,
    import_bytes,
    import_path,
)

FIXTURES = Path(__file__).parents[2] / "fixtures"
REAL = FIXTURES / "vllm-cpu-real"
PEERS = FIXTURES / "vllm-bench-serve"
SEED_CSV = (
    Path(__file__).parents[3] / "measurements/demo/data/seed_article_h100_llama31_70b_fp8.csv"
)
C8 = (REAL / "c8.json").read_bytes()
# What a user would type for files that do not name the engine/model (SOURCES.md says which).
NEEDS_FLAGS = {
    "llm-k8s__01_tp8_pp1__benchmark_results.json": DeploymentOverrides(
        engine="vllm", model="meta-llama/Llama-3.3-70B-Instruct"
    ),
}
EXPECTED_FORMAT = {
    "inferencex__agg_kimik2.5_1k1k_int4_vllm_conc4.json": "inferencex-agg",
    "llm-k8s__01_tp8_pp1__benchmark_results.json": "vllm-nightly-table",
}


@pytest.mark.parametrize("path", sorted(REAL.glob("*.json")) + sorted(PEERS.glob("*.json")))
def test_every_fixture_file_imports(path: Path) -> None:
    overrides = NEEDS_FLAGS.get(path.name, DeploymentOverrides(engine="vllm"))
    imported = import_path(path, overrides=overrides)
    assert imported.format_id == EXPECTED_FORMAT.get(path.name, "vllm-bench")
    assert imported.runs and all(run.levels for run in imported.runs)
    assert all(run.origin_file == path.name for run in imported.runs)


def test_runs_carry_the_file_name_and_the_sha256_of_its_bytes() -> None:
    (run,) = import_bytes("c8.json", C8).runs
    assert run.origin_file == "c8.json"
    assert run.source_sha256 == hashlib.sha256(C8).hexdigest()


def test_several_runs_from_one_file_get_distinct_part_keys() -> None:
    data = SEED_CSV.read_bytes()
    runs = import_bytes("seed.csv", data).runs
    digest = hashlib.sha256(data).hexdigest()
    keys = [run.source_sha256 or "" for run in runs]
    assert len(runs) == 2 and len(set(keys)) == 2
    # 64 hex characters each (the store's key column), none equal to the whole file's digest.
    assert all(len(key) == 64 and key != digest for key in keys)


def test_utf8_bom_and_utf16_files_decode() -> None:
    text = C8.decode()
    big_endian_with_bom = b"\xfe\xff" + text.encode("utf-16-be")
    for data in (b"\xef\xbb\xbf" + C8, text.encode("utf-16"), big_endian_with_bom):
        (run,) = import_bytes("c8.json", data).runs
        assert run.levels[0].value("output_tok_s") == 4958.706048513109


def test_other_encodings_are_refused_with_a_hint() -> None:
    with pytest.raises(InputError, match="UTF-8") as caught:
        import_bytes("latin1.csv", "engine,mod\xe8le\n".encode("latin-1"))
    assert caught.value.file == "latin1.csv"


@pytest.mark.parametrize("data", [b"", b"   \n\n", b"\xef\xbb\xbf"])
def test_empty_file_is_an_input_error(data: bytes) -> None:
    with pytest.raises(InputError, match="empty"):
        import_bytes("empty.json", data)


def test_truncated_json_names_the_line_and_column() -> None:
    data = C8[: len(C8) // 2]
    with pytest.raises(json.JSONDecodeError) as reference:
        json.loads(data)
    with pytest.raises(InputError) as caught:
        import_bytes("cut.json", data)
    where = f"line {reference.value.lineno} column {reference.value.colno}"
    assert where in str(caught.value) and caught.value.file == "cut.json"


def test_bad_json_line_in_json_lines_names_the_line() -> None:
    data = C8.strip() + b"\n" + C8[:100] + b"\n"
    with pytest.raises(InputError, match="line 2 column"):
        import_bytes("sweep.jsonl", data)


def test_unknown_format_lists_every_format_in_one_short_line() -> None:
    """Issue 24 item 3: the list with every description was about 2,500 characters."""
    with pytest.raises(UnknownFormatError) as caught:
        import_bytes("mystery.json", b'{"hello": "world"}')
    message = str(caught.value)
    assert "mystery.json" in message and "\n" not in message and len(message) < 400
    assert all(format_id in message for format_id in IMPORTERS)


def test_named_format_that_does_not_match_is_an_input_error() -> None:
    with pytest.raises(InputError, match="does not look like curve-csv"):
        import_bytes("c8.json", C8, format_id="curve-csv")


def test_unknown_format_name_lists_the_valid_ones() -> None:
    with pytest.raises(InputError, match="vllm-bench") as caught:
        import_bytes("c8.json", C8, format_id="no-such-tool")
    assert caught.value.value == "no-such-tool"


def test_oversized_bytes_and_files_are_refused(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr(importers, "MAX_IMPORT_BYTES", 100)
    with pytest.raises(FileTooLargeError, match="import limit"):
        import_bytes("c8.json", C8)
    path = tmp_path / "c8.json"
    path.write_bytes(C8)
    with pytest.raises(FileTooLargeError):
        import_path(path)


def test_missing_file_is_an_input_error(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="cannot read") as caught:
        import_path(tmp_path / "nope.json")
    assert "nope.json" in str(caught.value)


def test_override_replaces_the_file_value_and_the_conflict_is_noted() -> None:
    overrides = DeploymentOverrides(model="llama-tiny", gpu="H100-SXM-80GB", tp=1, engine=" ")
    (run,) = import_bytes("c8.json", C8, overrides=overrides).runs
    assert run.deployment.model == "llama-tiny" and run.deployment.gpu == "H100-SXM-80GB"
    assert run.deployment.engine == "vllm"  # a blank override means "not given"
    assert "model: file said tiny-random-llama, user set llama-tiny" in (run.notes or "")
    assert "gpu:" not in (run.notes or "")  # the file said nothing about the GPU


# --- property: whatever the bytes, only InputError escapes ---------------------------------

JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3)
    ),
    max_leaves=6,
)
OUTCOMES = {"imported", "refused"}
OVERRIDES = st.sampled_from([DeploymentOverrides(), DeploymentOverrides(engine="vllm", model="m")])


def _bases() -> dict[str, Any]:
    detailed = json.loads((REAL / "c2-detailed.json").read_bytes())
    for key in ("input_lens", "output_lens", "ttfts", "itls", "latencies", "start_times", "errors"):
        detailed[key] = detailed[key][:6]
    detailed.update(num_prompts=6, completed=6)
    agg = json.loads((PEERS / "inferencex__agg_kimik2.5_1k1k_int4_vllm_conc4.json").read_bytes())
    table = json.loads((PEERS / "llm-k8s__01_tp8_pp1__benchmark_results.json").read_bytes())
    (run,) = import_bytes("c8.json", C8).runs
    return {
        "new": json.loads(C8),
        "old": json.loads(next(PEERS.glob("inferencex__concurrency*.json")).read_bytes()),
        "detailed": detailed,
        "agg": agg,
        "table": table,
        "runfile": run.model_dump(mode="json"),
    }


BASES = _bases()


def _mutate(doc: Any, picks: list[tuple[int, int, Any]]) -> Any:
    doc = copy.deepcopy(doc)
    for key_pick, inner_pick, value in picks:
        target = doc[key_pick % len(doc)] if isinstance(doc, list) else doc
        if not isinstance(target, dict) or not target:
            continue
        key = sorted(target)[key_pick % len(target)]
        if value == "<delete>":
            del target[key]
        elif isinstance(target[key], list) and target[key] and inner_pick % 2:
            target[key][inner_pick % len(target[key])] = value
        else:
            target[key] = value
    return doc


def _import_or_input_error(data: bytes, overrides: DeploymentOverrides) -> str:
    try:
        imported = import_bytes("fuzz", data, overrides=overrides)
    except InputError as exc:
        assert exc.file == "fuzz" and exc.message  # the user learns which file and why
        return "refused"
    assert imported.runs and all(run.levels for run in imported.runs)
    return "imported"


@settings(max_examples=150, deadline=None)
@given(
    prefix=st.sampled_from([b"", b"{", b"[", b"\xef\xbb\xbf", b"\xff\xfe", b"source,"]),
    body=st.binary(max_size=200),
)
def test_arbitrary_bytes_import_or_raise_input_error(prefix: bytes, body: bytes) -> None:
    assert _import_or_input_error(prefix + body, DeploymentOverrides()) in OUTCOMES


@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    base=st.sampled_from(sorted(BASES)),
    picks=st.lists(
        st.tuples(st.integers(0, 999), st.integers(0, 999), JSON_VALUES | st.just("<delete>")),
        min_size=1,
        max_size=4,
    ),
    overrides=OVERRIDES,
)
def test_mutated_real_documents_import_or_raise_input_error(
    base: str, picks: list[tuple[int, int, Any]], overrides: DeploymentOverrides
) -> None:
    data = json.dumps(_mutate(BASES[base], picks)).encode()
    assert _import_or_input_error(data, overrides) in OUTCOMES


SEED_ROWS = list(csv.reader(line for line in SEED_CSV.read_text().splitlines() if line[:1] != "#"))


@settings(max_examples=150, deadline=None)
@given(
    row=st.integers(0, len(SEED_ROWS) - 1),
    column=st.integers(0, len(SEED_ROWS[0]) - 1),
    cell=st.text(max_size=12),
)
def test_mutated_curve_csv_imports_or_raises_input_error(row: int, column: int, cell: str) -> None:
    rows = copy.deepcopy(SEED_ROWS)
    rows[row][column] = cell
    out = io.StringIO()
    csv.writer(out).writerows(rows)
    assert _import_or_input_error(out.getvalue().encode(), DeploymentOverrides()) in OUTCOMES


@pytest.mark.parametrize(
    ("folder", "format_id"),
    [
        ("aiperf", "aiperf"),
        ("genai-perf", "genai-perf"),
        ("guidellm", "guidellm"),
        ("llmperf", "llmperf"),
        ("inference-perf", "inference-perf"),
        ("vllm-cpu-real", "vllm-bench"),
    ],
)
def test_auto_detection_names_each_tools_files(folder: str, format_id: str) -> None:
    overrides = DeploymentOverrides(engine="vllm", model="m")
    root = Path(__file__).parents[2] / "fixtures" / folder
    files = [p for p in sorted(root.iterdir()) if p.suffix in (".json", ".yaml")]
    results = {}
    for path in files:
        if "prometheus" in path.name:  # inference-perf's scrape of /metrics is not a result
            with pytest.raises(UnknownFormatError, match=r"import the \*_lifecycle_metrics"):
                import_path(path, overrides=overrides)
            continue
        results[path.name] = import_path(path, overrides=overrides).format_id
    assert results and set(results.values()) == {format_id}, results


# --- the load a user states for files that do not state theirs ------------------------------

INDIVIDUAL = FIXTURES / "llmperf" / "llmperf-leaderboard__individual__anyscale_70b.json"


def test_user_load_fills_a_file_that_states_none_and_says_so() -> None:
    facts = DeploymentOverrides(engine="vllm", model="m", concurrency=16)
    (run,) = import_path(INDIVIDUAL, overrides=facts).runs
    (level,) = run.levels
    assert (level.load_kind.value, level.load_value, level.load_stated) == ("concurrency", 16, True)
    assert (level.notes or "").startswith("load stated by the user: concurrency 16")
    (plain,) = import_path(INDIVIDUAL, overrides=DeploymentOverrides(engine="vllm", model="m")).runs
    assert not plain.levels[0].load_stated


def test_user_load_never_replaces_a_load_the_file_states() -> None:
    facts = DeploymentOverrides(engine="vllm", request_rate=3.0)
    (run,) = import_bytes("c8.json", C8, overrides=facts).runs
    assert (run.levels[0].load_kind.value, run.levels[0].load_value) == ("concurrency", 8)


def test_user_load_is_one_of_concurrency_or_rate() -> None:
    with pytest.raises(ValueError, match="not both"):
        DeploymentOverrides(concurrency=4, request_rate=1.0)


def test_a_count_beyond_64_bits_is_refused_naming_the_field() -> None:
    doc = json.loads(C8)
    doc["num_prompts"] = 9.223372036854776e18  # found by the fuzz test: SQLite cannot store it
    with pytest.raises(InputError, match="too large") as caught:
        import_bytes("huge.json", json.dumps(doc).encode(), overrides=DeploymentOverrides())
    assert caught.value.field == "num_prompts"
