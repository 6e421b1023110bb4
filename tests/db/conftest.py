"""Store fixtures: a migrated database per test on the backend under test (tests/stores.py) and
a RunFile that sets every field the store keeps."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
from sqlalchemy import Engine, event

from db.engine import make_engine
from db.repository import save_runs
from measurements.run_file import (
    Capabilities,
    CapabilityCheck,
    Deployment,
    Environment,
    Level,
    LoadKind,
    Metric,
    Origin,
    Provenance,
    RequestSample,
    RunFile,
    Source,
    Startup,
    Workload,
)
from team.roles import SYSTEM
from tests.stores import Stores


@pytest.fixture
def db_url(stores: Stores) -> str:
    """URL of a fresh database at the newest revision, on the backend under test."""
    return stores.migrated()


@pytest.fixture
def db_path(db_url: str) -> Path:
    """The file of this test's database (SQLite-only tests)."""
    if not db_url.startswith("sqlite:///"):
        pytest.skip("needs the SQLite file")
    return Path(db_url.removeprefix("sqlite:///"))


@pytest.fixture
def engine(db_url: str) -> Iterator[Engine]:
    """An engine on this test's database, disposed afterwards."""
    made = make_engine(db_url)
    yield made
    made.dispose()


@pytest.fixture
def statements(engine: Engine) -> Iterator[list[str]]:
    """SQL statements the engine sends (BEGIN/COMMIT left out), to pin query counts."""
    seen: list[str] = []

    def record(*args: object) -> None:
        statement = str(args[2])
        if not statement.startswith(("BEGIN", "COMMIT", "ROLLBACK")):
            seen.append(statement)

    event.listen(engine, "before_cursor_execute", record)
    yield seen
    event.remove(engine, "before_cursor_execute", record)


@pytest.fixture
def team_runs(engine: Engine) -> list[int]:
    """24 stored team runs (team_run(0..23)) of 2 levels and 3 samples each; ids, oldest first."""
    return [
        result.run_id
        for result in save_runs(engine, [team_run(i) for i in range(24)], actor=SYSTEM)
    ]


TEAM_ENGINES = ("vllm", "tensorrt-llm")
TEAM_GPUS = ("H100-SXM-80GB", "H200-SXM-141GB", None)


def team_run(index: int) -> RunFile:
    """Run `index`: engines and GPUs cycle, every third run imported, labels numbered, runs
    from 20 on of another model."""
    base = full_run(f"team run {index:02d}", source_sha256=None)
    deployment = base.deployment.model_dump() | {
        "engine": TEAM_ENGINES[index % 2],
        "gpu": TEAM_GPUS[index % 3],
        "model": "Qwen/Qwen2.5-72B" if index >= 20 else base.deployment.model,
    }
    provenance = Provenance.IMPORTED if index % 3 == 0 else Provenance.MEASURED
    return base.model_copy(
        update={"deployment": Deployment(**deployment), "provenance": provenance}
    )


def full_run(label: str = "full run", source_sha256: str | None = "ab" * 32) -> RunFile:
    """A RunFile setting every field, with awkward values (float tails, unicode, 0.1 + 0.2)."""
    return RunFile(
        source=Source.PROBE,
        provenance=Provenance.MEASURED,
        deployment=Deployment(
            engine="vllm",
            engine_version="0.32.0",
            model="meta-llama/Llama-3.1-70B-Instruct",
            precision="fp8",
            gpu="H100-SXM-80GB",
            gpu_count=8,
            tp=8,
            pp=1,
            launch_command="vllm serve meta-llama/Llama-3.1-70B-Instruct -tp 8",
            engine_args={"max_num_seqs": "256", "kv_cache_dtype": "fp8"},
        ),
        workload=Workload(
            isl=3000,
            osl=300,
            isl_distribution="normal(3000, 300)",
            osl_distribution="fixed",
            dataset="random",
            ignore_eos=True,
        ),
        environment=Environment(
            host="gpu-box-1",
            gpu_name="NVIDIA H100 80GB HBM3",
            gpu_driver="550.54.15",
            cuda_version="12.4",
            client="capplan probe",
            client_version="0.1.0",
        ),
        startup=Startup(
            cold_start_s=18.25,
            engine_build_s=840.0,
            vram_idle_gb=71.5,
            kv_cache_tokens=1_234_560,
            max_concurrency=75.35,
            max_concurrency_at_tokens=16_384,
        ),
        capabilities=Capabilities(
            structured_output=CapabilityCheck(status="supported", detail="json_schema honoured"),
            tool_calling=CapabilityCheck(status="failed", detail="HTTP 400: tool_choice"),
            lora=CapabilityCheck(status="unsupported", detail="--enable-lora not set"),
        ),
        levels=(_closed_loop_level(), _open_loop_level()),
        started_at=datetime(2025, 3, 4, 5, 6, 7, 891011, tzinfo=UTC),
        complete=False,
        label=label,
        notes="sweep stopped at c=32: Grüße ✓ 𝔘",
        origin_file="probe-2025-03-04.json",
        source_sha256=source_sha256,
    )


def _closed_loop_level() -> Level:
    return Level(
        load_kind=LoadKind.CONCURRENCY,
        load_value=4,
        duration_s=61.123456789,
        window_start_s=5.0,
        window_end_s=55.5,
        burst=True,  # not a realistic closed-loop level: it makes the round trip cover the column
        load_stated=False,
        requests_sent=12,
        completed=10,
        failed=1,
        incomplete=1,
        input_tokens_total=36000,
        output_tokens_total=3000,
        metrics=(
            Metric(
                name="output_tok_s",
                value=1234.5678901234567,
                origin=Origin.REPORTED,
                source_key="output_throughput",
                source_value=1234.5678901234567,
            ),
            Metric(name="output_tok_s", value=1230.0000000000002, origin=Origin.RECOMPUTED),
            Metric(
                name="p99_ttft_ms",
                value=0.30000000000000004 * 1000,
                origin=Origin.REPORTED,
                source_key="p99_ttft_s",
                source_value=0.30000000000000004,
            ),
            Metric(name="stream_tok_s", value=1e-300, origin=Origin.DERIVED),
        ),
        samples=(
            RequestSample(
                send_s=0.1 + 0.2,
                ttft_ms=123.456,
                e2e_ms=4567.891,
                input_tokens=3000,
                output_tokens=300,
                chunk_gaps_ms=(15.1, 14.999999999999998, 16.0, 1e-9),
                http_status=200,
                error="none: kept to prove the column round-trips",
            ),
            RequestSample(send_s=0.5, ttft_ms=99.0, e2e_ms=4000.0, output_tokens=300),
            RequestSample(send_s=0.75, http_status=500, error="HTTPStatusError: 500 from /v1"),
        ),
        notes="steady state 5-55.5 s",
    )


def _open_loop_level() -> Level:
    return Level(
        load_kind=LoadKind.RATE,
        load_value=2.5,
        metrics=(Metric(name="request_s", value=2.49, origin=Origin.REPORTED),),
    )
