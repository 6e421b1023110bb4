"""Property tests over every importable fixture of every tool: a file mutated anywhere in its
structure (deep keys, list items, CSV cells) either imports or raises InputError naming the
file, and a store never holds part of a file that was refused.

The fixtures are discovered, so a new importer's fixture is fuzzed as soon as it lands."""

from __future__ import annotations

import copy
import csv
import io
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import Engine

from db.engine import make_engine
from db.repository import save_runs
from db.run_lists import count_runs
from errors import InputError
from measurements.importers import DeploymentOverrides, import_bytes
from team.roles import SYSTEM
from tests.stores import Stores

FIXTURES = Path(__file__).parents[2] / "fixtures"
# Folders of things that are not result files (nvidia-smi text, SSE streams, raw shapes,
# planning scenarios).
NOT_RESULTS = {"nvidia-smi", "sse", "vllm-cpu-shapes", "scenarios"}
SUFFIXES = {".json", ".yaml", ".yml", ".csv", ".jsonl"}
# Files the tools (and scripts/record_peer_outputs.py) write beside their results in real-*/:
# the recorder's record, the tools' own configs, manifests and validation reports.
NOT_RESULT_NAMES = {
    "record.json",
    "scenario.json",
    "config.json",
    "config.yaml",
    "validation.json",
    "phase_manifest.json",
    ".aiperf_results_ready.json",
}
# Mutating a 200 KB YAML 60 times takes minutes (the YAML parser); the same real format is
# fuzzed through its JSON twin, and every level of a real run has the one layout of c4.
MUTATE_YAML_MAX_BYTES = 64 * 1024
FACTS = DeploymentOverrides(engine="vllm", model="m")


def _fixtures() -> list[Path]:
    found = []
    for folder in sorted(p for p in FIXTURES.iterdir() if p.is_dir()):
        if folder.name in NOT_RESULTS:
            continue
        for path in sorted(folder.rglob("*")):
            if path.name in NOT_RESULT_NAMES or path.name.startswith("inference-perf.partial"):
                continue
            if path.suffix in SUFFIXES and "prometheus" not in path.name:
                found.append(path)
    return found


def _worth_mutating(path: Path) -> bool:
    real = next((part for part in path.parts if part.startswith("real-")), None)
    if real is not None and path.parts[path.parts.index(real) + 1] != "c4":
        return False
    big_yaml = path.suffix in (".yaml", ".yml") and path.stat().st_size > MUTATE_YAML_MAX_BYTES
    return not big_yaml


FILES = _fixtures()
MUTATED = [path for path in FILES if _worth_mutating(path)]


def _load(path: Path) -> tuple[str, Any]:
    text = path.read_text(encoding="utf-8")
    if path.suffix in (".yaml", ".yml"):
        return "yaml", yaml.safe_load(text)
    if path.suffix == ".csv":
        return "csv", list(csv.reader(io.StringIO(text)))
    if path.suffix == ".jsonl":
        return "jsonl", [json.loads(line) for line in text.splitlines() if line.strip()]
    return "json", json.loads(text)


DOCS = {path: _load(path) for path in FILES}

LEAVES = (
    st.none()
    | st.booleans()
    | st.integers(-(10**6), 10**20)
    | st.floats()
    | st.text(max_size=6)
    | st.sampled_from(["inf", "NaN", "-1", "1e400", "", "ms", "s", "tokens/sec"])
)
VALUES = st.recursive(
    LEAVES,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner),
    max_leaves=5,
)
DELETE = "<delete>"
# A mutation: a path of picks down the document, and what to put there (or delete).
EDITS = st.tuples(st.lists(st.integers(0, 10**4), min_size=1, max_size=6), VALUES | st.just(DELETE))


def _mutate(doc: Any, path: list[int], value: Any) -> Any:
    """Walk down `path` (each pick chooses a key or index) and replace or delete what is there."""
    doc = copy.deepcopy(doc)
    parent: Any = None
    key: Any = None
    node = doc
    for pick in path:
        if isinstance(node, dict) and node:
            parent, key = node, sorted(node, key=str)[pick % len(node)]
        elif isinstance(node, list) and node:
            parent, key = node, pick % len(node)
        else:
            break
        node = parent[key]
    if parent is None:
        return value
    if value == DELETE:
        if isinstance(parent, dict):
            del parent[key]
        else:
            parent.pop(key)
    else:
        parent[key] = value
    return doc


def _encode(kind: str, doc: Any) -> bytes:
    if kind == "yaml":
        return yaml.safe_dump(doc, allow_unicode=True).encode()
    if kind == "csv":
        out = io.StringIO()
        rows = doc if isinstance(doc, list) else [doc]
        csv.writer(out).writerows(row if isinstance(row, list) else [row] for row in rows)
        return out.getvalue().encode()
    if kind == "jsonl":
        items = doc if isinstance(doc, list) else [doc]
        return "\n".join(json.dumps(item) for item in items).encode()
    return json.dumps(doc).encode()


def _outcome(name: str, data: bytes, facts: DeploymentOverrides) -> str:
    try:
        imported = import_bytes(name, data, overrides=facts)
    except InputError as exc:
        assert exc.file == name and exc.message
        return "refused"
    assert imported.runs and all(run.levels for run in imported.runs)
    return "imported"


def test_every_tool_has_fuzzed_fixtures() -> None:
    folders = {path.parent.name for path in FILES}
    expected = {"aiperf", "genai-perf", "guidellm", "inference-perf", "llm-d-benchmark-report"}
    assert folders >= expected | {"llmperf", "trtllm-bench", "trtllm-serving", "vllm-cpu-real"}


@pytest.mark.parametrize("path", FILES, ids=lambda p: str(p.relative_to(FIXTURES)))
def test_fixture_imports_unmutated(path: Path) -> None:
    kind, doc = DOCS[path]
    assert _outcome(path.name, _encode(kind, doc), FACTS) == "imported"


@pytest.mark.parametrize("path", MUTATED, ids=lambda p: str(p.relative_to(FIXTURES)))
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    picks=st.lists(
        EDITS,
        min_size=1,
        max_size=3,
    ),
    facts=st.sampled_from([FACTS, DeploymentOverrides()]),
)
def test_mutated_fixture_imports_or_raises_input_error(
    path: Path, picks: list[tuple[list[int], Any]], facts: DeploymentOverrides
) -> None:
    kind, doc = DOCS[path]
    for where, value in picks:
        doc = _mutate(doc, where, value)
    assert _outcome(path.name, _encode(kind, doc), facts) in {"imported", "refused"}


@pytest.fixture(scope="module")
def store(stores: Stores) -> Iterator[Engine]:
    engine = make_engine(stores.migrated("fuzz"))
    yield engine
    engine.dispose()


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    index=st.integers(0, len(FILES) - 1),
    picks=st.lists(
        EDITS,
        min_size=1,
        max_size=2,
    ),
)
def test_a_batch_with_a_mutated_file_is_stored_whole_or_not_at_all(
    store: Any, index: int, picks: list[tuple[list[int], Any]]
) -> None:
    path = FILES[index]
    kind, doc = DOCS[path]
    for where, value in picks:
        doc = _mutate(doc, where, value)
    before = count_runs(store)
    try:
        runs = import_bytes(path.name, _encode(kind, doc), overrides=FACTS).runs
    except InputError:
        assert count_runs(store) == before
        return
    try:
        results = save_runs(store, runs, actor=SYSTEM)
    except InputError:
        assert count_runs(store) == before  # refused by the store: nothing half-written
        return
    created = sum(result.created for result in results)
    assert count_runs(store) == before + created
