"""Bounded parsing: alias bombs, deep nesting, long lists, huge numbers and duplicate keys are
refused quickly in bounded memory, naming the file and the place; real tool files pass as parsed."""

from __future__ import annotations

import json
import time
import tracemalloc
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
import yaml

from errors import InputError, ScenarioError, preview
from measurements.bounded import Limits, load_json, load_yaml, load_yaml_all
from measurements.importers import import_bytes
from measurements.importers.common import DeploymentOverrides
from planner.inputs.scenario import scenario_from_yaml

pytestmark = pytest.mark.hostile

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
# Hang and blow-up guards, far above what a refusal costs (milliseconds, a few MB), below what
# the unbounded parse took (32 s and 3 GB for the nine-level bomb). CPU seconds of this process,
# not wall time: a busy box (CI, `-n 2`) once took 5.3 s of wall time under tracemalloc.
GUARD_S = 20.0
GUARD_BYTES = 64 * 2**20


def _bomb(levels: int = 9, fan: int = 9, key: str = "metric") -> str:
    """The 'billion laughs' YAML: each level a list of `fan` aliases of the level below."""
    lines = ['l0: &l0 "lol"']
    for level in range(1, levels + 1):
        aliases = ", ".join([f"*l{level - 1}"] * fan)
        lines.append(f"l{level}: &l{level} [{aliases}]")
    lines.append(f"{key}: *l{levels}")
    return "\n".join(lines) + "\n"


@contextmanager
def _bounded() -> Iterator[None]:
    tracemalloc.start()
    start = time.process_time()
    try:
        yield
    finally:
        elapsed = time.process_time() - start
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        assert elapsed < GUARD_S and peak < GUARD_BYTES, (elapsed, peak)


def _refused(parse: Callable[[], object]) -> InputError:
    with _bounded(), pytest.raises(InputError) as caught:
        parse()
    return caught.value


def test_an_alias_bomb_is_refused_without_expanding_it() -> None:
    text = _bomb()
    assert len(text) < 1_000  # nine levels of nine: 387 million strings once expanded
    error = _refused(lambda: load_yaml(text, "report.yaml"))
    assert error.file == "report.yaml" and "alias" in str(error)


@pytest.mark.parametrize("place", ["name", "unknown_key", "candidates"])
def test_a_scenario_with_a_bomb_anywhere_is_refused(place: str) -> None:
    key = {"name": "name", "unknown_key": "surprise", "candidates": "engines"}[place]
    text = _bomb(key=key)
    if place == "candidates":
        text = text.replace("engines: *l9", "candidates:\n  engines: *l9")
    error = _refused(lambda: scenario_from_yaml(text, "brief.yaml"))
    assert isinstance(error, ScenarioError) and "alias" in str(error)


def test_an_alias_that_contains_itself_is_refused() -> None:
    error = _refused(lambda: load_yaml("a: &a [1, *a]\n", "loop.yaml"))
    assert "contains it" in str(error)


def test_a_few_aliases_are_still_read() -> None:
    assert load_yaml("x: &x [1, 2]\ny: *x\nz: *x\n", "f.yaml") == {
        "x": [1, 2],
        "y": [1, 2],
        "z": [1, 2],
    }


def test_the_merge_key_merges_and_own_keys_win() -> None:
    text = "base: &b {isl: 1024, osl: 256}\nrun: {<<: *b, osl: 512}\n"
    assert load_yaml(text, "m.yaml") == {
        "base": {"isl": 1024, "osl": 256},
        "run": {"isl": 1024, "osl": 512},
    }


def test_a_scenario_can_use_the_merge_key(tmp_path: Path) -> None:
    text = (
        "defaults: &d {ttft_p99_ms: 800}\n"
        "name: merged\nmodel: meta-llama/Llama-3.1-70B\n"
        "workload: {isl: 1024, osl: 256}\n"
        "demand: {peak_requests_per_s: 5}\n"
        "sla: {<<: *d, tpot_p99_ms: 40}\n"
    )
    with pytest.raises(ScenarioError) as caught:
        scenario_from_yaml(text, "merged.yaml")
    # The merge itself parses; only the top-level anchor key is not a scenario field.
    assert "defaults" in str(caught.value) and "constructor" not in str(caught.value)


@pytest.mark.parametrize(
    ("text", "parse"),
    [
        ('{"completed": 64, "completed": 1}', load_json),
        ("completed: 64\ncompleted: 1\n", load_yaml),
    ],
)
def test_a_key_given_twice_is_refused(text: str, parse: Callable[[str, str], object]) -> None:
    error = _refused(lambda: parse(text, "dup"))
    assert "'completed'" in str(error) and "twice" in str(error)


@pytest.mark.parametrize(
    ("text", "parse"),
    [("[" * 5000 + "]" * 5000, load_json), ("[" * 5000 + "]" * 5000, load_yaml)],
)
def test_brackets_five_thousand_deep_are_refused(
    text: str, parse: Callable[[str, str], object]
) -> None:
    assert "nest" in str(_refused(lambda: parse(text, "deep")))


def test_the_depth_limit_names_the_place() -> None:
    text = json.dumps({"a": [[[{"b": 1}]]]})
    error = _refused(lambda: load_json(text, "f.json", Limits(max_depth=3)))
    assert error.field is not None and error.field.startswith("a[0][0]")


@pytest.mark.parametrize("number", ["1e308", "99999999999999999999999", "-1e22"])
def test_numbers_beyond_the_bound_are_refused(number: str) -> None:
    error = _refused(lambda: load_json(f'{{"isl": {number}}}', "n.json"))
    assert error.field == "isl" and "beyond" in str(error)


def test_nanosecond_timestamps_and_nan_pass() -> None:
    found = load_json('{"start_ns": 1764441244000000000, "std": NaN}', "t.json")
    assert isinstance(found, dict) and found["start_ns"] == 1764441244000000000


def test_a_long_list_is_refused_at_its_place() -> None:
    error = _refused(lambda: load_json('{"gpus": [1, 2, 3, 4]}', "l.json", Limits(max_list=3)))
    assert error.field == "gpus" and "4 items" in str(error)


@pytest.mark.parametrize(("count", "field"), [(100_000, None), (2_000, "candidates.gpus")])
def test_a_scenario_listing_thousands_of_gpus_is_refused_at_once(
    count: int, field: str | None
) -> None:
    # 100,000 (600 KB) is over a scenario's size bound; 2,000 over its list bound.
    gpus = ", ".join(["H100"] * count)
    text = f"name: x\nmodel: m\ncandidates:\n  gpus: [{gpus}]\n"
    error = _refused(lambda: scenario_from_yaml(text, "many.yaml"))
    assert error.file == "many.yaml" and error.field == field


def test_previews_never_render_a_whole_value() -> None:
    deep: object = [1]
    for _ in range(40):
        deep = [deep, deep]  # 2^40 leaves once written out
    with _bounded():
        shown = [preview(deep), preview(10**100_000), preview("x" * 10**7)]
    assert all(len(text) <= 80 for text in shown)
    assert shown[1] == "<an integer of about 100,000 digits>"


def _fixture_documents() -> list[Path]:
    return sorted(p for p in FIXTURES.rglob("*") if p.suffix in (".json", ".yaml", ".yml"))


@pytest.mark.parametrize("path", _fixture_documents(), ids=lambda p: str(p.relative_to(FIXTURES)))
def test_every_real_fixture_parses_as_the_standard_parser_reads_it(path: Path) -> None:
    text = path.read_text(encoding="utf-8", errors="replace")
    try:
        expected = json.loads(text) if path.suffix == ".json" else list(yaml.safe_load_all(text))
    except (ValueError, yaml.YAMLError):
        pytest.skip("not a document the standard parser reads either (a deliberately bad file)")
    found = load_json(text, path.name) if path.suffix == ".json" else load_yaml_all(text, path.name)
    assert json.dumps(found, sort_keys=True, default=str) == json.dumps(
        expected, sort_keys=True, default=str
    )


@pytest.mark.parametrize(
    ("extra", "field"),
    [
        ("workload: {isl: 99999999999999999999999, osl: 128}", "workload.isl"),
        ("workload: {isl: 20000000, osl: 128}", "workload.isl"),
        ("pricing: {H100-SXM-80GB: 1.0e+308}", "pricing.H100-SXM-80GB"),
        ("workload: {isl: 128, osl: 128}\npricing: {H100-SXM-80GB: 20000.0}", "pricing"),
    ],
)
def test_scenario_numbers_beyond_physical_bounds_are_refused(extra: str, field: str) -> None:
    text = f"name: x\nmodel: m\ndemand: {{peak_requests_per_s: 1}}\n{extra}\n"
    error = _refused(lambda: scenario_from_yaml(text, "edge.yaml"))
    assert isinstance(error, ScenarioError) and error.field == field


def test_a_scenario_name_of_a_thousand_characters_is_refused() -> None:
    error = _refused(lambda: scenario_from_yaml(f"name: {'n' * 1000}\nmodel: m\n", "long.yaml"))
    assert error.field == "name"


def test_an_uploaded_guidellm_yaml_bomb_is_refused_by_the_importer() -> None:
    data = _bomb(key="benchmarks").encode()
    error = _refused(lambda: import_bytes("benchmarks.yaml", data))
    assert error.file == "benchmarks.yaml" and "alias" in str(error)


def test_a_result_file_giving_a_key_twice_is_refused_by_the_importer() -> None:
    real = FIXTURES / "vllm-cpu-real" / "c8.json"
    text = real.read_text(encoding="utf-8")
    doubled = text.replace('"completed": ', '"completed": 1, "completed": ', 1)
    assert doubled != text
    error = _refused(lambda: import_bytes("c8.json", doubled.encode()))
    assert "'completed' is given twice" in str(error)
    assert import_bytes("c8.json", text.encode())  # the file itself imports


def test_an_aiperf_ttft_given_as_a_list_is_refused_not_dropped() -> None:
    real = FIXTURES / "aiperf" / "real-0.13.0" / "rate2" / "profile_export_aiperf.json"
    doc = json.loads(real.read_text(encoding="utf-8"))
    vllm = DeploymentOverrides(engine="vllm")  # AIPerf does not name the engine
    assert import_bytes(real.name, real.read_bytes(), overrides=vllm)  # as AIPerf 0.13 wrote it
    doc["time_to_first_token"] = [12.5, 13.1]
    error = _refused(lambda: import_bytes(real.name, json.dumps(doc).encode(), overrides=vllm))
    assert error.field == "time_to_first_token" and "metric object" in str(error)


@pytest.mark.parametrize(
    ("file", "share"),
    [
        *(("real-0.8.1/c4/benchmarks.yaml", share) for share in (1 / 3, 1 / 2, 2 / 3, 0.8, 0.9)),
        # A cut at 8-16% of this one parsed as a benchmark with request/s alone.
        *(("guidellm__benchmarks_stripped_v0.2-era.yaml", share) for share in (0.08, 0.1, 0.16)),
    ],
)
def test_a_guidellm_yaml_cut_short_is_refused_not_stored_in_part(file: str, share: float) -> None:
    real = FIXTURES / "guidellm" / file
    text = real.read_text(encoding="utf-8")
    vllm = DeploymentOverrides(engine="vllm")
    assert import_bytes(real.name, text.encode(), overrides=vllm)  # the whole file imports
    lines = text.splitlines(keepends=True)
    cut = "".join(lines[: int(len(lines) * share)])  # at a line end: still valid YAML
    for format_id in ("auto", "guidellm"):
        error = _refused(
            lambda f=format_id: import_bytes(real.name, cut.encode(), format_id=f, overrides=vllm)
        )
        assert error.file == real.name
