"""Result folders as `vllm bench serve --save-result --result-dir results/` leaves them after
several runs: one real result file (tests/fixtures/vllm-cpu-real) per run, with the model,
date and numbers each run would have written, named as vLLM names them."""

from __future__ import annotations

import io
import json
import zipfile
from pathlib import Path

FIXTURES = Path(__file__).resolve().parent / "fixtures"
REAL_C8 = FIXTURES / "vllm-cpu-real" / "c8.json"
REAL_C1 = FIXTURES / "vllm-cpu-real" / "c1.json"
# Three runs at concurrency 8: Llama-3.1-8B on two days (the second slower), Qwen3-32B once.
THREE_RUNS = (
    ("meta-llama/Llama-3.1-8B-Instruct", "20250301-101010", 1.0),
    ("meta-llama/Llama-3.1-8B-Instruct", "20250302-111111", 1.25),
    ("Qwen/Qwen3-32B", "20250302-121212", 2.0),
)
_LATENCY_KEYS = ("mean_ttft_ms", "median_ttft_ms", "p99_ttft_ms", "mean_tpot_ms", "p99_tpot_ms")


def vllm_result(model: str, date: str, slower: float = 1.0, real: Path = REAL_C8) -> bytes:
    """The real result file as a run of `model` on `date` would have written it, its
    latencies `slower` times the recorded ones."""
    result = json.loads(real.read_text(encoding="utf-8"))
    result.update(model_id=model, tokenizer_id=model, date=date)
    for key in _LATENCY_KEYS:
        result[key] *= slower
    result["latencies"] = [latency * slower for latency in result["latencies"]]
    return json.dumps(result).encode()


def vllm_file_name(model: str, date: str, concurrency: int = 8) -> str:
    """vLLM's own name: `vllm-<rate>qps-concurrency<C>-<model base name>-<date>.json`."""
    return f"vllm-infqps-concurrency{concurrency}-{model.rsplit('/', 1)[-1]}-{date}.json"


def write_three_runs(folder: Path) -> list[Path]:
    """The three-run folder on disk."""
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for model, date, slower in THREE_RUNS:
        path = folder / vllm_file_name(model, date)
        path.write_bytes(vllm_result(model, date, slower))
        written.append(path)
    return written


def zip_of(members: list[tuple[str, bytes]], *, folder_entry: str | None = None) -> bytes:
    """A zip of (name, bytes) members; `folder_entry` adds the folder's own entry first (as
    `zip -r` writes it)."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        if folder_entry is not None:
            archive.writestr(zipfile.ZipInfo(folder_entry.rstrip("/") + "/"), b"")
        for name, data in members:
            archive.writestr(name, data)
    return buffer.getvalue()
