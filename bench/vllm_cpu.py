"""The real vLLM CPU server (tiny random Llama) for the real-engine benchmarks, started as the
integration tests start theirs (tests/integration/conftest.py)."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.integration.conftest import (  # noqa: E402
    VllmServer,
    check_vllm_importable,
    start_server,
    tiny_model_dir,
    vllm_python,
)


@contextmanager
def vllm_cpu_server(log_dir: Path) -> Iterator[VllmServer]:
    """A running server for the block; exits with the reason when vLLM is not installed."""
    python = vllm_python()
    reason = check_vllm_importable(python)
    if reason is not None or python is None:
        raise SystemExit(reason or "no vLLM python")
    server = start_server(python, tiny_model_dir(python), log_dir)
    try:
        yield server
    finally:
        server.stop()
