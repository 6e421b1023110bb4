"""A Hugging Face config.json -> ModelFacts: parameters by part (embeddings, attention, dense MLPs
and shared experts, routed experts), active parameters per token, the KV cache per token by
attention kind (GQA, MLA's latent, sliding-window layers, linear-attention and SSM state) and the
checkpoint's precision per part.

Counts the served text model: a vision tower and multi-token-prediction layers are left out (and
said so in the notes). A field that is needed but missing is a ConfigError naming it.
"""

from __future__ import annotations

import json
from pathlib import Path

from planner.physics import config_layers as cl
from planner.physics.config_layers import Config, ConfigError, Mixer
from planner.physics.config_quant import checkpoint_precision
from planner.physics.models import ModelFacts

_MIXER_WORDS = {
    "full_attention": "full",
    "attention": "full",
    "global_attention": "full",
    "chunked_attention": "full",
    "deepseek_sparse_attention": "full",
    "sliding_attention": "sliding",
    "local_attention": "sliding",
    "linear_attention": "linear",
    "mamba": "mamba",
}
_PATTERN_MIXERS = {"M": "mamba", "*": "full"}  # Nemotron-H: M Mamba, * attention, E MoE, - MLP
_PATTERN_MLPS = {"E": "moe", "-": "dense"}
_BLOCK_SYMBOLS = {"mamba": "M", "attention": "*", "moe": "E", "mlp": "-"}
Layer = tuple[Mixer, tuple[str, ...], int | None]  # mixer, MLP kinds, its own dense MLP params


def read_config(path: Path) -> Config:
    """A config.json file as a dict, or ConfigError naming the file."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise ConfigError(f"cannot read: {error}", file=str(path)) from error
    try:
        loaded = json.loads(text)
    except json.JSONDecodeError as error:
        raise ConfigError(f"not JSON: {error.msg} at line {error.lineno}", file=str(path)) from None
    if not isinstance(loaded, dict):
        raise ConfigError("expected a JSON object (a config.json)", file=str(path))
    return loaded


# Layouts capplan does not read yet: refused by name rather than counted wrong.
_UNREAD_LAYOUTS = ("attn_layer_period", "expert_layer_period", "layer_block_types_pattern")


def facts_from_config(config: Config, model: str, source: str) -> ModelFacts:
    """The model description of one config.json (`model`: the canonical name it is known by);
    ConfigError naming the field when it cannot be read."""
    try:
        return _facts(config, model, source)
    except ConfigError:
        raise
    except (TypeError, ValueError, AttributeError, KeyError, ZeroDivisionError) as error:
        raise ConfigError(f"not understood: {type(error).__name__}: {error}", file=source) from None


def _facts(config: Config, model: str, source: str) -> ModelFacts:
    text = _text_part(config, source)
    _refuse_unread(text, source)
    pattern = _hybrid_pattern(text)
    layers = cl.positive(
        text, "num_hidden_layers", "n_layers", "num_layers", default=len(pattern) or None,
        source=source,
    )  # fmt: skip
    hidden = cl.number(text, "hidden_size", source=source)
    vocab = cl.number(text, "vocab_size", source=source)
    plan = _layer_plan(text, layers, source)
    moe = cl.moe(text, source)
    attention = dense = experts = moe_layers = 0
    kv_full = kv_window = state = score = 0
    for mixer, mlp, own_dense in plan:
        attention += mixer.params
        if mixer.kind == "sliding":
            kv_window += mixer.kv_elements
        else:
            kv_full += mixer.kv_elements
        state += mixer.state_elements
        score += mixer.score_width
        dense += 2 * hidden  # the layer's norms
        if "dense" in mlp:
            dense += _dense_width(text, source) if own_dense is None else own_dense
        if "moe" in mlp and moe is not None:
            moe_layers += 1
            experts += moe.experts * moe.expert_params
            dense += moe.shared_params
    precision, sixteen_bit = checkpoint_precision(config, text)
    window = cl.number(text, "sliding_window", "sliding_window_size", default=0)
    return ModelFacts(
        model=model,
        source=source,
        layers=layers,
        hidden_size=hidden,
        vocab_size=vocab,
        tied_embeddings=bool(text.get("tie_word_embeddings", config.get("tie_word_embeddings"))),
        attention=_attention_words(plan, text),
        embedding_params=vocab * hidden,
        attention_params=attention,
        dense_params=dense + hidden,
        expert_params=experts,
        moe_layers=moe_layers,
        experts=moe.experts if moe else 0,
        top_k=moe.top_k if moe else 0,
        kv_elements_per_token=kv_full,
        window_kv_elements_per_token=kv_window if window else 0,
        window_tokens=window,
        state_elements_per_seq=state,
        state_bytes_per_element=_state_bytes(text),
        attention_score_width=score,
        checkpoint=precision,
        sixteen_bit_parts=sixteen_bit,
        notes=_notes(config, text),
    )


def _refuse_unread(text: Config, source: str) -> None:
    unread = next((field for field in _UNREAD_LAYOUTS if text.get(field) is not None), None)
    if unread is not None:
        raise ConfigError(
            "this hybrid layer layout is not read yet (Jamba-style periods): its size would be "
            "wrong, so capplan gives none",
            file=source,
            field=unread,
            value=text.get(unread),
        )


def _state_bytes(text: Config) -> float:
    dtype = str(text.get("mamba_ssm_cache_dtype") or text.get("mamba_ssm_dtype") or "bfloat16")
    return 4.0 if "32" in dtype else 2.0


def _text_part(config: Config, source: str) -> Config:
    for key in ("text_config", "llm_config", "language_config"):
        part = config.get(key)
        if isinstance(part, dict) and part.get("hidden_size"):
            merged = {k: v for k, v in config.items() if k != key}
            merged.update(part)
            return merged
    if not config.get("hidden_size"):
        raise ConfigError(
            "missing: not a language model's config.json (no hidden_size, no text_config)",
            file=source,
            field="hidden_size",
        )
    return config


def _layer_plan(text: Config, layers: int, source: str) -> list[Layer]:
    """Each layer's mixer, MLP kind ("dense", "moe", both, or none) and, where the layer states
    its own, its dense MLP's parameters."""
    if isinstance(text.get("block_configs"), list):
        return _block_plan(text, source)
    pattern = _hybrid_pattern(text)
    if pattern:
        return _pattern_plan(text, pattern, source)
    kinds = _mixer_kinds(text, layers, source)
    mixers = {kind: _mixer(text, kind, source) for kind in set(kinds)}
    mlps = _mlp_kinds(text, layers)
    return [(mixers[kinds[i]], mlps[i], None) for i in range(layers)]


def _hybrid_pattern(text: Config) -> str:
    """Nemotron-H's layer string (M Mamba, * attention, E MoE, - MLP), from
    hybrid_override_pattern or a layers_block_type list; "" when the config has neither."""
    pattern = text.get("hybrid_override_pattern")
    if isinstance(pattern, str):
        return pattern
    blocks = text.get("layers_block_type")
    if isinstance(blocks, list):
        return "".join(_BLOCK_SYMBOLS.get(str(b), "?") for b in blocks)
    return ""


def _mixer(text: Config, kind: str, source: str) -> Mixer:
    if kind == "linear":
        if isinstance(text.get("linear_attn_config"), dict):
            return _kda(text, source)
        return cl.linear_attention(text, source)
    if kind == "mamba":
        return cl.mamba(text, source)
    return cl.attention(text, kind, source)


def _mixer_kinds(text: Config, layers: int, source: str) -> list[str]:
    types = text.get("layer_types")
    if isinstance(types, list) and types:
        words = [_MIXER_WORDS.get(str(t)) for t in types[:layers]]
        unknown = next((t for t, w in zip(types, words, strict=False) if w is None), None)
        if unknown is not None:
            raise ConfigError(
                f"layer type not understood (known: {', '.join(sorted(_MIXER_WORDS))})",
                file=source,
                field="layer_types",
                value=unknown,
            )
        return [w for w in words if w is not None] + ["full"] * (layers - len(words))
    hybrid = text.get("hybrid_layer_pattern") or text.get("attn_type_list")
    if isinstance(hybrid, list) and len(hybrid) >= layers:
        # MiMo: 0 full, 1 sliding; MiniMax: 0 linear (lightning), 1 full softmax attention
        minimax = str(text.get("model_type") or "").startswith("minimax")
        names = ("linear", "full") if minimax else ("full", "sliding")
        return [names[1] if int(v) else names[0] for v in hybrid[:layers]]
    linear = text.get("linear_attn_config")
    if isinstance(linear, dict) and isinstance(linear.get("full_attn_layers"), list):
        full = {int(v) for v in linear["full_attn_layers"]}  # 1-based (Kimi Linear)
        return ["full" if i + 1 in full else "linear" for i in range(layers)]
    interval = cl.number(text, "full_attention_interval", default=0)
    if interval:
        return ["full" if (i + 1) % interval == 0 else "linear" for i in range(layers)]
    every = cl.number(text, "sliding_window_pattern", default=0)
    if every and text.get("sliding_window"):  # Gemma 3: every Nth layer global, the rest local
        return ["full" if (i + 1) % every == 0 else "sliding" for i in range(layers)]
    return ["full"] * layers


def _mlp_kinds(text: Config, layers: int) -> list[tuple[str, ...]]:
    if cl.routed_experts(text) <= 1:
        return [("dense",)] * layers
    if text.get("enable_moe_block"):  # Gemma 4: a dense MLP beside the experts in every layer
        return [("dense", "moe")] * layers
    types = text.get("mlp_layer_types")
    if isinstance(types, list) and len(types) >= layers:
        return [("dense",) if str(t) == "dense" else ("moe",) for t in types[:layers]]
    freq = text.get("moe_layer_freq")
    if isinstance(freq, list) and len(freq) >= layers:
        return [("moe",) if int(v) else ("dense",) for v in freq[:layers]]
    first = cl.number(text, "first_k_dense_replace", default=0)
    every = cl.number(text, "moe_layer_freq", "decoder_sparse_step", default=1) or 1
    step = cl.number(text, "interleave_moe_layer_step", default=0)
    only = {int(v) for v in text.get("mlp_only_layers") or []}
    kinds: list[tuple[str, ...]] = []
    for i in range(layers):
        sparse = i >= first and i not in only
        sparse = sparse and ((i + 1) % step == 0 if step else (i - first) % every == 0)
        kinds.append(("moe",) if sparse else ("dense",))
    return kinds


def _dense_width(text: Config, source: str) -> int:
    if cl.routed_experts(text) > 1 and not text.get("enable_moe_block"):
        return cl.dense_mlp(text, source)
    width = cl.number(text, "intermediate_size", source=source)
    return cl.dense_mlp(text, source, width)


def _pattern_plan(text: Config, pattern: str, source: str) -> list[Layer]:
    known = set(_PATTERN_MIXERS) | set(_PATTERN_MLPS)
    odd = next((ch for ch in pattern if ch not in known), None)
    if odd is not None:
        raise ConfigError(
            "layer symbol not understood (known: M Mamba, * attention, E MoE, - MLP)",
            file=source,
            field="hybrid_override_pattern",
            value=odd,
        )
    none = Mixer("none", 0, 0)
    mixers = {k: _mixer(text, v, source) for k, v in _PATTERN_MIXERS.items() if k in pattern}
    return [
        (mixers.get(ch, none), (_PATTERN_MLPS[ch],) if ch in _PATTERN_MLPS else (), None)
        for ch in pattern
    ]


def _block_plan(text: Config, source: str) -> list[Layer]:
    """Nemotron NAS: each block states its attention (heads per KV group, or none, or a linear
    layer) and its MLP width (as a multiple of the hidden size)."""
    hidden = cl.number(text, "hidden_size", source=source)
    heads = cl.number(text, "num_attention_heads", source=source)
    plan: list[Layer] = []
    for block in text["block_configs"]:
        att, ffn = block.get("attention") or {}, block.get("ffn") or {}
        if att.get("no_op"):
            mixer = Mixer("none", 0, 0)
        elif att.get("replace_with_linear"):
            mixer = Mixer("none", hidden * hidden, 0)
        else:
            group = cl.number(att, "n_heads_in_group", source=source)
            sub = dict(text, num_key_value_heads=heads // max(group, 1))
            mixer = cl.attention(sub, "full", source)
        if ffn.get("no_op"):
            width = 0
        elif ffn.get("replace_with_linear"):
            width = hidden // 3
        else:
            width = -(-int(2 * float(ffn.get("ffn_mult", 0)) * hidden / 3) // 256) * 256
        plan.append((mixer, ("dense",) if width else (), 3 * hidden * width))
    return plan


def _kda(text: Config, source: str) -> Mixer:
    """Kimi delta attention: q, k, v, gate and output projections of heads x head dim, a short
    convolution, and a head dim x head dim state per head per sequence."""
    part = text["linear_attn_config"]
    hidden = cl.number(text, "hidden_size", source=source)
    heads = cl.number(part, "num_heads", source=source)
    head_dim = cl.number(part, "head_dim", source=source)
    kernel = cl.number(part, "short_conv_kernel_size", default=4)
    width = heads * head_dim
    params = 5 * hidden * width + 3 * width * kernel
    return Mixer("linear", params, 0, heads * head_dim * head_dim + 3 * width * (kernel - 1))


def _attention_words(plan: list[Layer], text: Config) -> str:
    kinds = [m.kind for m, _, _ in plan if m.kind != "none"]
    full = "MLA (compressed latent KV)" if text.get("kv_lora_rank") else "GQA"
    parts = []
    for kind, word in (
        ("full", full),
        ("sliding", f"sliding window {text.get('sliding_window') or ''}".strip()),
        ("linear", "linear attention"),
        ("mamba", "Mamba SSM"),
    ):
        count = kinds.count(kind)
        if count:
            parts.append(f"{count} {word}")
    return " + ".join(parts) + " layers"


def _notes(config: Config, text: Config) -> tuple[str, ...]:
    notes = []
    mtp = cl.number(
        text, "num_nextn_predict_layers", "mtp_num_hidden_layers", "num_mtp_modules", default=0
    )
    if mtp:
        notes.append(f"{mtp} multi-token-prediction layer(s) left out (loaded only for MTP)")
    if isinstance(config.get("vision_config"), dict):
        notes.append("vision encoder left out: the text model only")
    for field in ("compress_ratios", "index_kpool", "engram_layer_ids", "kv_source_layer_ids"):
        if text.get(field):
            notes.append(f"{field} not modelled: the KV cache estimate is an upper bound")
    return tuple(notes)
