"""Per-layer parameter and cache counts from a Hugging Face config.json's text part.

Each function reads the field names the families in use spell (Llama, Qwen3/3.5, DeepSeek V3 and
its MLA descendants, gpt-oss, Mixtral, Llama 4, MiniMax, GLM, Gemma, Nemotron-H) and returns
whole numbers; a field that is needed but missing or not a number raises ConfigError naming it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from errors import InputError

Config = dict[str, Any]


class ConfigError(InputError):
    """A config.json field capplan needs is missing or not understood."""


@dataclass(frozen=True, slots=True)
class Mixer:
    """One layer's token mixer: its parameters, the cache elements each token of context adds,
    and the fixed state each sequence holds (linear attention, SSM)."""

    kind: str  # "full", "sliding", "linear", "mamba"
    params: int
    kv_elements: int  # per token of context
    state_elements: int = 0  # per sequence
    score_width: int = 0  # heads x (query-key dim + value dim): attention FLOPs / 2 per pair


@dataclass(frozen=True, slots=True)
class Moe:
    """A mixture-of-experts layer's shape: routed experts, how many each token uses, parameters of
    one routed expert, and the always-on parameters (shared experts, router, latent projections)."""

    experts: int
    top_k: int
    expert_params: int
    shared_params: int


def number(config: Config, *names: str, default: int | None = None, source: str = "") -> int:
    """The first of `names` that the config states as a whole number (JSON null counts as not
    stated); `default` if none; ConfigError naming the first name otherwise."""
    for name in names:
        value = config.get(name)
        if value is None:
            continue
        if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
            raise ConfigError(
                "expected a non-negative number", file=source, field=name, value=value
            )
        return int(value)
    if default is not None:
        return default
    raise ConfigError("missing: capplan needs it for the model's size", file=source, field=names[0])


def gated(config: Config) -> int:
    """Matrices per MLP: 3 for gated activations (SwiGLU, GeGLU), 2 for squared ReLU (Nemotron,
    Minitron), the one activation name that says the MLP has no gate."""
    act = str(config.get("mlp_hidden_act") or config.get("hidden_act") or "silu").lower()
    return 2 if act == "relu2" else 3


def positive(config: Config, *names: str, default: int | None = None, source: str = "") -> int:
    """number(), refusing 0 (a layer or head count of 0 describes no model)."""
    value = number(config, *names, default=default, source=source)
    if value <= 0:
        raise ConfigError("must be at least 1", file=source, field=names[0], value=value)
    return value


def attention(config: Config, kind: str, source: str) -> Mixer:
    """A softmax-attention layer: multi-head latent (MLA) when the config has a KV LoRA rank,
    else grouped-query; `kind` is "full" or "sliding"."""
    hidden = positive(config, "hidden_size", source=source)
    heads = positive(config, "num_attention_heads", "n_heads", source=source)
    if config.get("kv_lora_rank"):
        return _mla(config, kind, hidden, heads, source)
    if kind == "sliding":
        kv_heads = number(config, "swa_num_key_value_heads", "num_key_value_heads", default=heads)
        head_dim = number(config, "swa_head_dim", "head_dim", default=hidden // heads)
        heads = number(config, "swa_num_attention_heads", default=heads)
    else:
        kv_heads = number(
            config, "num_global_key_value_heads", "num_key_value_heads", default=heads
        )
        head_dim = number(config, "global_head_dim", "head_dim", default=hidden // heads)
    value_dim = number(config, "v_head_dim", default=head_dim) if kind == "full" else head_dim
    shared_kv = bool(config.get("attention_k_eq_v")) and kind == "full"
    q_width = heads * head_dim * (2 if config.get("attn_output_gate") else 1)
    kv_width = kv_heads * (head_dim + (0 if shared_kv else value_dim))
    params = hidden * (q_width + kv_width) + heads * value_dim * hidden
    return Mixer(kind, params, kv_width, score_width=heads * (head_dim + value_dim))


def _mla(config: Config, kind: str, hidden: int, heads: int, source: str) -> Mixer:
    """DeepSeek's multi-head latent attention: the cache holds one compressed latent plus the
    rotary key per token (kv_lora_rank + qk_rope_head_dim), shared by every head; a sparse
    attention indexer (DeepSeek V3.2, GLM-5) adds its own key per token."""
    rank = number(config, "kv_lora_rank", source=source)
    rope = number(config, "qk_rope_head_dim", source=source)
    nope = number(config, "qk_nope_head_dim", default=0)
    if not nope:
        nope = number(config, "qk_head_dim", "head_dim", source=source) - rope
    value = number(config, "v_head_dim", default=nope)
    q_rank = number(config, "q_lora_rank", default=0)
    q_out = heads * (nope + rope)
    query = q_rank * (hidden + q_out) + q_rank if q_rank else hidden * q_out
    kv = hidden * (rank + rope) + rank + rank * heads * (nope + value)
    out_rank = number(config, "o_lora_rank", default=0)
    out = out_rank * (heads * value + hidden) if out_rank else heads * value * hidden
    cached = rank + rope
    index_heads = number(config, "index_n_heads", default=0)
    if index_heads:
        index_dim = number(config, "index_head_dim", source=source)
        query_in = q_rank or hidden
        query += query_in * index_heads * index_dim + hidden * (index_dim + index_heads)
        cached += index_dim
    return Mixer(kind, query + kv + out, cached, score_width=heads * (nope + rope + value))


def linear_attention(config: Config, source: str) -> Mixer:
    """A gated-delta-net layer (Qwen3-Next, Qwen3.5): projections in and out, a short
    convolution, and a recurrent state of value heads x key dim x value dim per sequence."""
    hidden = number(config, "hidden_size", source=source)
    key_heads = number(config, "linear_num_key_heads", source=source)
    key_dim = number(config, "linear_key_head_dim", source=source)
    value_heads = number(config, "linear_num_value_heads", source=source)
    value_dim = number(config, "linear_value_head_dim", source=source)
    kernel = number(config, "linear_conv_kernel_dim", default=4)
    conv_width = 2 * key_heads * key_dim + value_heads * value_dim
    params = hidden * (conv_width + value_heads * value_dim + 2 * value_heads)
    params += conv_width * kernel + value_heads * value_dim * hidden + 2 * value_heads
    state = value_heads * key_dim * value_dim + conv_width * (kernel - 1)
    return Mixer("linear", params, 0, state)


def mamba(config: Config, source: str) -> Mixer:
    """A Mamba-2 layer (Nemotron-H): in/out projections, a convolution, and an SSM state of
    heads x head dim x state size per sequence."""
    hidden = number(config, "hidden_size", source=source)
    heads = number(config, "mamba_num_heads", source=source)
    head_dim = number(config, "mamba_head_dim", source=source)
    groups = number(config, "n_groups", default=1)
    state_size = number(config, "ssm_state_size", source=source)
    kernel = number(config, "conv_kernel", default=4)
    inner = heads * head_dim
    conv_width = inner + 2 * groups * state_size
    params = hidden * (2 * inner + 2 * groups * state_size + heads)
    params += conv_width * kernel + inner * hidden + 3 * heads + inner
    state = heads * head_dim * state_size + conv_width * (kernel - 1)
    return Mixer("mamba", params, 0, state)


def dense_mlp(config: Config, source: str, width: int | None = None) -> int:
    """A dense MLP's parameters (gate, up and down, or up and down when not gated)."""
    hidden = number(config, "hidden_size", source=source)
    inner = width or number(
        config, "dense_intermediate_size", "intermediate_size_mlp", "intermediate_size",
        source=source,
    )  # fmt: skip
    return gated(config) * hidden * inner


def moe(config: Config, source: str) -> Moe | None:
    """The MoE shape, or None for a dense model."""
    experts = routed_experts(config, source)
    if experts <= 1:
        return None
    top_k = number(
        config, "num_experts_per_tok", "experts_per_token", "top_k_experts",
        "num_experts_per_token", "moe_topk", "moe_k", source=source,
    )  # fmt: skip
    if not 1 <= top_k <= experts:
        raise ConfigError(
            f"experts per token must be 1 to the {experts} routed experts",
            file=source,
            field="num_experts_per_tok",
            value=top_k,
        )
    hidden = number(config, "hidden_size", source=source)
    inner = number(
        config, "moe_intermediate_size", "routed_expert_hidden_size", "expert_intermediate_size",
        "intermediate_size", source=source,
    )  # fmt: skip
    latent = number(config, "moe_latent_size", default=0)
    mats = gated(config)
    width = latent or hidden
    expert = mats * width * inner
    shared = hidden * experts + (2 * hidden * latent if latent else 0)
    shared += _shared_experts(config, hidden, inner, mats)
    return Moe(experts, top_k, expert, shared)


def routed_experts(config: Config, source: str = "") -> int:
    """Routed experts per MoE layer (0 or 1: a dense model)."""
    return number(
        config, "n_routed_experts", "num_experts", "num_local_experts", "moe_num_experts",
        default=0, source=source,
    )  # fmt: skip


def _shared_experts(config: Config, hidden: int, inner: int, mats: int) -> int:
    width = number(
        config, "shared_expert_intermediate_size", "moe_shared_expert_intermediate_size",
        "shared_intermediate_size", "share_expert_dim", default=-1,
    )  # fmt: skip
    if width >= 0:
        return mats * hidden * width
    count = number(config, "n_shared_experts", "num_shared_experts", default=0)
    if str(config.get("model_type") or "").startswith("llama4"):
        count = max(count, 1)
    return count * mats * hidden * inner
