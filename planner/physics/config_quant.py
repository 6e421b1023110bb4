"""A checkpoint's precision from its config.json quantisation block (fp8, MXFP4, NVFP4 from
ModelOpt or compressed-tensors), and which parts it keeps at 16 bits (its ignore list).
"""

from __future__ import annotations

import re
from typing import Any

Config = dict[str, Any]
_ALGOS = {
    "nvfp4": "nvfp4",
    "w4a16_nvfp4": "nvfp4",
    "w4a8_nvfp4_fp8": "nvfp4",
    "mxfp4": "mxfp4",
    "w4a8_mxfp4_fp8": "mxfp4",
    "fp8": "fp8",
    "fp8_block_scales": "fp8",
    "fp8_pb_wo": "fp8",
    "int4_awq": "int4",
    "w4a16_awq": "int4",
    "w8a8_sq_per_channel": "int8",
}
_LIST_KEYS = ("modules_to_not_convert", "ignore", "exclude_modules", "ignored_layers")
# A module name in an ignore list, by the part it keeps at 16 bits: attention projections (not a
# norm or a scale named after attention), shared experts, dense MLP projections (not the router,
# which is `mlp.gate`), or whole layers (GLM's first dense layers).
_PART_PATTERNS = {
    "attention": re.compile(r"(self_attn|linear_attn|\battn\b)(?!\w*norm)", re.IGNORECASE),
    "shared": re.compile(r"shared_expert", re.IGNORECASE),
    "dense": re.compile(
        r"mlp\\?\.\(?(gate_up|gate|up|down)[|a-z_]*\)?_proj|layers\.\d+\.?\*$", re.IGNORECASE
    ),
}


def checkpoint_precision(config: Config, text: Config) -> tuple[str, frozenset[str]]:
    """(the checkpoint's weight precision in words, the parts its ignore list keeps at 16 bits:
    "attention", "shared" experts, "dense" MLPs)."""
    quant = config.get("quantization_config") or text.get("quantization_config")
    if not isinstance(quant, dict):
        dtype = str(text.get("torch_dtype") or text.get("dtype") or "bfloat16")
        return ("fp32" if "32" in dtype else "bf16"), frozenset()
    precision = _precision(quant)
    ignored = [str(e) for key in _LIST_KEYS for e in quant.get(key) or [] if isinstance(e, str)]
    kept = frozenset(
        part for part, rx in _PART_PATTERNS.items() if any(rx.search(e) for e in ignored)
    )
    return precision, kept


def _precision(quant: Config) -> str:
    method = str(quant.get("quant_method") or "").lower()
    if method == "mxfp4":
        return "mxfp4"
    algo = str(quant.get("moe_quant_algo") or quant.get("quant_algo") or "").lower()
    if algo in _ALGOS:
        return _ALGOS[algo]
    if algo == "mixed_precision" and isinstance(quant.get("quantized_layers"), dict):
        algos = [str(v.get("quant_algo", "")).lower() for v in quant["quantized_layers"].values()]
        found = {_ALGOS.get(a, a) for a in algos}
        main = "nvfp4" if "nvfp4" in found else "mxfp4" if "mxfp4" in found else "fp8"
        return (
            main if found == {main} else f"{main} (mixed with {', '.join(sorted(found - {main}))})"
        )
    fmt = str(quant.get("format") or "").lower()
    if "mxfp4" in fmt or "nvfp4" in fmt:
        return "mxfp4" if "mxfp4" in fmt else "nvfp4"
    bits = _group_bits(quant)
    if bits is not None:
        return bits
    return method or "quantised (method not stated)"


def _group_bits(quant: Config) -> str | None:
    groups = quant.get("config_groups")
    if not isinstance(groups, dict):
        return None
    for group in groups.values():
        weights = group.get("weights") if isinstance(group, dict) else None
        if not isinstance(weights, dict):
            continue
        bits, kind = weights.get("num_bits"), str(weights.get("type") or "int")
        if bits == 4 and kind == "float":
            return "nvfp4" if weights.get("group_size") == 16 else "mxfp4"
        if bits == 8:
            return "fp8" if kind == "float" else "int8"
        if bits == 4:
            return "int4"
    return None
