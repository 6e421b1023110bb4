"""Model facts (parameter count, shapes for KV-cache size) with their sources, from
planner/physics/data.

An unknown model has no facts: callers skip the physics checks and say so, they never guess.
"""

from __future__ import annotations

import csv
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from errors import InputError
from planner.curves.load import canonical_model

MODELS_CSV = Path(__file__).with_name("data") / "models.csv"
_BYTES_PER_WEIGHT = {
    "fp32": 4.0,
    "bf16": 2.0,
    "fp16": 2.0,
    "fp8": 1.0,
    "int8": 1.0,
    "w8a8": 1.0,
    "int4": 0.5,
    "w4a16": 0.5,
    "awq": 0.5,
    "gptq": 0.5,
    "nvfp4": 0.5,
    "fp4": 0.5,
}
_INT_COLUMNS = ("total_params", "layers", "hidden_size", "kv_heads", "head_dim", "vocab_size")


@dataclass(frozen=True, slots=True)
class ModelFacts:
    """One model's architecture numbers (from its config.json) and where they come from."""

    model: str
    total_params: int
    layers: int
    hidden_size: int
    kv_heads: int
    head_dim: int
    vocab_size: int
    tied_embeddings: bool
    source: str

    @property
    def embedding_params(self) -> int:
        """Parameters of one vocab x hidden table (input embedding or LM head)."""
        return self.vocab_size * self.hidden_size

    @property
    def decode_read_params(self) -> int:
        """Parameters read in full by every decode step: all but the input embedding table.

        Decoding looks up one embedding row per token, so an untied input table is not read in
        full; a tied table is, because it also serves as the LM head.
        """
        untied_input = 0 if self.tied_embeddings else self.embedding_params
        return self.total_params - untied_input

    @property
    def matmul_params_per_token(self) -> int:
        """Parameters in the per-token matrix multiplies of the transformer layers.

        Leaves out the embedding lookup and the LM head (prefill applies it to the last token
        only), so 2 x this x tokens is a lower bound on prefill FLOPs.
        """
        tables = 1 if self.tied_embeddings else 2
        return self.total_params - tables * self.embedding_params

    def kv_bytes_per_token(self, bytes_per_element: float) -> float:
        """KV-cache bytes one token occupies: K and V for every layer and KV head."""
        return 2.0 * self.layers * self.kv_heads * self.head_dim * bytes_per_element


def bytes_per_weight(precision: str | None) -> float | None:
    """Bytes one weight takes at this precision (fp8 1, bf16 2, int4/nvfp4 0.5); None if unknown."""
    if precision is None:
        return None
    return _BYTES_PER_WEIGHT.get(precision.strip().lower())


def model_facts(name: str, path: Path = MODELS_CSV) -> ModelFacts | None:
    """Facts for a model by any spelling canonical_model() accepts; None when not in the table."""
    return _facts_by_model(path).get(canonical_model(name))


def load_model_facts(path: Path = MODELS_CSV) -> list[ModelFacts]:
    """Every row of the model facts table, in file order."""
    lines = [line for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    rows = csv.DictReader(line for line in lines if not line.startswith("#"))
    return [_facts(row, path, number) for number, row in enumerate(rows, start=1)]


@cache
def _facts_by_model(path: Path) -> dict[str, ModelFacts]:
    return {facts.model: facts for facts in load_model_facts(path)}


def _facts(row: dict[str, str], path: Path, number: int) -> ModelFacts:
    value = {column: _positive_int(row, column, path, number) for column in _INT_COLUMNS}
    tied = (row.get("tied_embeddings") or "").strip().lower()
    if tied not in ("true", "false"):
        raise InputError(
            f"row {number}: expected true or false",
            file=str(path),
            field="tied_embeddings",
            value=tied,
        )
    return ModelFacts(
        model=canonical_model(row.get("model") or ""),
        total_params=value["total_params"],
        layers=value["layers"],
        hidden_size=value["hidden_size"],
        kv_heads=value["kv_heads"],
        head_dim=value["head_dim"],
        vocab_size=value["vocab_size"],
        tied_embeddings=tied == "true",
        source=row.get("source") or "",
    )


def _positive_int(row: dict[str, str], column: str, path: Path, number: int) -> int:
    text = (row.get(column) or "").strip()
    if not text.isdigit() or int(text) == 0:
        raise InputError(
            f"row {number}: expected a positive whole number",
            file=str(path),
            field=column,
            value=text,
        )
    return int(text)
