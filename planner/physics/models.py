"""Model facts: one typed description of a model (parameters by part, active parameters per
token, attention kind and KV cache per token, the checkpoint's precision), built from its
Hugging Face config.json by planner.physics.config and looked up by planner.physics.catalog.

Bytes per weight include the block scales the formats store beside the weights (NVFP4: one FP8
scale per 16 weights; MXFP4: one 8-bit scale per 32), because decoding reads them too.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import numpy as np

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
    "nvfp4": 0.5625,
    "mxfp4": 0.53125,
    "fp4": 0.5625,
}
_PRECISION_SPELLINGS = {
    "float32": "fp32",
    "bfloat16": "bf16",
    "float16": "fp16",
    "half": "fp16",
    "fp8e4m3": "fp8",
    "fp8e5m2": "fp8",
    "e4m3": "fp8",
    "float8": "fp8",
    "fp8block": "fp8",
    "fp8blockscales": "fp8",
    "fp4": "fp4",
    "int4awq": "awq",
    "w4a16awq": "awq",
}
SIXTEEN_BIT = 2.0


def canonical_precision(precision: str | None) -> str | None:
    """'FP-8', 'fp8_e4m3', 'float8' -> 'fp8'; 'BFloat16' -> 'bf16'; None stays None."""
    if precision is None or not precision.strip():
        return None
    squashed = re.sub(r"[^a-z0-9]", "", precision.strip().lower())
    return _PRECISION_SPELLINGS.get(squashed, squashed)


def bytes_per_weight(precision: str | None) -> float | None:
    """Bytes one weight takes at this precision (with its block scales); None if unknown."""
    name = canonical_precision(precision)
    return None if name is None else _BYTES_PER_WEIGHT.get(name)


def known_precisions() -> tuple[str, ...]:
    """Every precision capplan has a bytes-per-weight for."""
    return tuple(_BYTES_PER_WEIGHT)


@dataclass(frozen=True, slots=True)
class PartBytes:
    """Bytes of each part of a model's weights at a deployment's precision."""

    embedding: float  # one vocab x hidden table
    lm_head: float  # 0 when tied to the embedding
    attention: float
    dense: float  # dense MLPs, shared experts, routers, norms
    experts: float  # every routed expert

    @property
    def total(self) -> float:
        """Every weight, as stored."""
        return self.embedding + self.lm_head + self.attention + self.dense + self.experts

    @property
    def always_read(self) -> float:
        """What every decode step reads whatever the routing: all but the input table (a lookup)
        and the routed experts (tied tables are read as the LM head)."""
        head = self.embedding if self.lm_head == 0 else self.lm_head
        return head + self.attention + self.dense


@dataclass(frozen=True, slots=True)
class ModelFacts:
    """One model's architecture numbers (from its config.json) and where they come from."""

    model: str
    source: str
    layers: int
    hidden_size: int
    vocab_size: int
    tied_embeddings: bool
    attention: str  # in words: "61 MLA (compressed latent KV) layers"
    embedding_params: int  # one vocab x hidden table
    attention_params: int
    dense_params: int  # dense MLPs, shared experts, routers, norms
    expert_params: int  # every routed expert of every MoE layer
    moe_layers: int
    experts: int  # routed experts per MoE layer (0: a dense model)
    top_k: int  # routed experts each token uses
    kv_elements_per_token: int  # full-attention layers: cache elements per token of context
    window_kv_elements_per_token: int  # sliding-window layers, up to window_tokens of context
    window_tokens: int
    state_elements_per_seq: int  # linear-attention / SSM state, fixed per sequence
    state_bytes_per_element: float  # the state's dtype (fp32 for Mamba and gated delta nets)
    attention_score_width: int  # sum over attention layers of heads x (qk dim + v dim)
    checkpoint: str  # the checkpoint's weight precision
    sixteen_bit_parts: frozenset[str]  # parts the checkpoint's ignore list keeps at 16 bits
    notes: tuple[str, ...] = ()

    @property
    def is_moe(self) -> bool:
        """Whether the model routes tokens to experts."""
        return self.experts > 1 and self.expert_params > 0

    @property
    def expert_share(self) -> float:
        """Share of the routed experts one token uses (top-k / experts); 0 for a dense model."""
        return self.top_k / self.experts if self.is_moe else 0.0

    @property
    def lm_head_params(self) -> int:
        """The LM head's parameters (0 when tied to the input embedding)."""
        return 0 if self.tied_embeddings else self.embedding_params

    @property
    def total_params(self) -> int:
        """Every parameter of the served text model."""
        tables = self.embedding_params + self.lm_head_params
        return tables + self.attention_params + self.dense_params + self.expert_params

    @property
    def active_params(self) -> int:
        """Parameters one token uses: all but the routed experts it is not sent to."""
        unused = self.expert_params * (1.0 - self.expert_share) if self.is_moe else 0.0
        return round(self.total_params - unused)

    @property
    def matmul_params_per_token(self) -> int:
        """Active parameters in the per-token matrix multiplies of the layers (no embedding
        lookup, no LM head: prefill applies that to the last token only); 2 x this x tokens is a
        lower bound on prefill FLOPs."""
        experts = self.expert_params * self.expert_share
        return round(self.attention_params + self.dense_params + experts)

    def kv_elements(self, context: Any) -> Any:
        """Cache elements one sequence holds at `context` tokens (a number or an array), its
        fixed state aside."""
        window = np.minimum(context, self.window_tokens) if self.window_tokens else context
        return self.kv_elements_per_token * context + self.window_kv_elements_per_token * window

    @property
    def state_bytes_per_seq(self) -> float:
        """Bytes of the fixed per-sequence state (linear attention, SSM)."""
        return self.state_elements_per_seq * self.state_bytes_per_element

    @property
    def attention_flops_per_token_ctx(self) -> float:
        """Attention FLOPs one prompt token spends per earlier token (scores and values)."""
        return 2.0 * self.attention_score_width

    def kv_bytes_per_token(self, bytes_per_element: float) -> float:
        """KV-cache bytes per token of context on every attention layer (windows unbounded)."""
        per_token = self.kv_elements_per_token + self.window_kv_elements_per_token
        return per_token * bytes_per_element

    def part_bytes(self, precision: str) -> PartBytes | None:
        """Weight bytes by part at a deployment precision; None when the precision is unknown.

        The precision applies to every linear layer except the parts the checkpoint keeps at 16
        bits when the deployment runs the checkpoint's own format."""
        weight = bytes_per_weight(precision)
        if weight is None:
            return None
        # Embedding tables at the deployment's precision, never under 8 bits: on the measured
        # H100/H200 sample, FP8 deployments of Llama-3.1-70B ran as many streams together as
        # FP8 tables leave room for, not as few as 16-bit tables would.
        table = max(weight, 1.0)
        own = _same_format(precision, self.checkpoint)
        kept = self.sixteen_bit_parts if own else frozenset()

        def part(name: str, params: int) -> float:
            return params * (max(weight, SIXTEEN_BIT) if name in kept else weight)

        shared_or_dense = "dense" if "dense" in kept or "shared" in kept else "other"
        return PartBytes(
            embedding=self.embedding_params * table,
            lm_head=self.lm_head_params * table,
            attention=part("attention", self.attention_params),
            dense=part(shared_or_dense, self.dense_params),
            experts=self.expert_params * weight,
        )

    def summary(self) -> str:
        """One line: size, active size, attention and checkpoint precision."""
        size = f"{self.total_params / 1e9:,.1f}B parameters"
        if self.is_moe:
            size += (
                f", {self.active_params / 1e9:,.1f}B active ({self.top_k} of {self.experts} "
                f"experts in {self.moe_layers} MoE layers)"
            )
        return f"{size}; {self.attention}; checkpoint {self.checkpoint}"


def _same_format(precision: str, checkpoint: str) -> bool:
    mine = bytes_per_weight(precision)
    theirs = bytes_per_weight(checkpoint.split(" ", maxsplit=1)[0])
    return mine is not None and theirs is not None and abs(mine - theirs) < 0.1
