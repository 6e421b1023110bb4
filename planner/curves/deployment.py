"""What a run's deployment states about its layout: GPUs per replica (TP x PP x attention data
parallel), the attention data-parallel ranks, expert parallelism, and the KV-cache dtype.

Never guessed: a layout the run does not state stays None (or 1 rank), and where stated numbers
disagree the run gets a flag that says which one capplan used.
"""

from __future__ import annotations

import re

from measurements.run_file import RunFile

_DP_ARGS = ("attention_dp", "attention_dp_size", "data_parallel_size", "dp_size", "dp")
_EP_ARGS = ("moe_ep", "expert_parallel_size", "moe_expert_parallel_size", "ep_size", "ep")
_TRUE = ("true", "1", "yes", "on")


def stated_kv_cache_dtype(engine_args: dict[str, str], launch_command: str) -> str | None:
    """The KV-cache dtype a deployment states: an engine argument (kv_cache_dtype, vLLM's
    --kv-cache-dtype, TensorRT-LLM's kv_cache_quant_algo) or the flag in its launch command;
    None when not stated or 'auto' (the engine's default)."""
    for name in ("kv_cache_dtype", "kv-cache-dtype", "kv_cache_quant_algo"):
        value = (engine_args.get(name) or "").strip().lower()
        if value and value != "auto":
            return value
    found = re.search(r"--kv[-_]cache[-_]dtype[ =]+(\S+)", launch_command)
    value = found.group(1).strip("'\"").lower() if found else ""
    return value if value and value != "auto" else None


def launch_command(run: RunFile) -> str:
    """The deployment's launch command ('' when not recorded)."""
    return run.deployment.launch_command or ""


def attention_dp(run: RunFile) -> int:
    """Attention data-parallel ranks in one replica: as an engine argument or a launch flag
    states it, or TensorRT-LLM's enable_attention_dp over the GPUs beyond TP x PP; else 1."""
    dep = run.deployment
    args = {k.replace("-", "_"): v for k, v in dep.engine_args.items()}
    for name in _DP_ARGS:
        stated = _whole(args.get(name))
        if stated is not None:
            return max(stated, 1)
    found = re.search(r"--(?:data-parallel-size|dp-size|dp)[ =]+(\d+)", launch_command(run))
    if found:
        return max(int(found.group(1)), 1)
    # Enabled without a size (TensorRT-LLM's enable_attention_dp): every GPU beyond TP x PP is a
    # rank. A GPU count above TP x PP alone is never read as attention DP (it may be replicas).
    per_rank = (dep.tp or 0) * (dep.pp or 1)
    enabled = (args.get("enable_attention_dp") or "").strip().lower() in _TRUE
    if enabled and dep.gpu_count and per_rank and dep.gpu_count % per_rank == 0:
        return dep.gpu_count // per_rank
    return 1


def expert_parallel(run: RunFile) -> int | None:
    """Expert-parallel size as an engine argument or launch flag states it; None: not stated."""
    args = {k.replace("-", "_"): v for k, v in run.deployment.engine_args.items()}
    for name in _EP_ARGS:
        stated = _whole(args.get(name))
        if stated is not None:
            return max(stated, 1)
    if (args.get("enable_expert_parallel") or "").strip().lower() in _TRUE:
        return run.deployment.gpu_count
    found = re.search(r"--(?:expert-parallel-size|ep-size|ep)[ =]+(\d+)", launch_command(run))
    return int(found.group(1)) if found else None


def gpus_per_replica(run: RunFile, flags: list[str]) -> int | None:
    """GPUs one replica uses: TP x PP x attention DP when TP is stated, else the GPU count;
    None (with a flag) when neither is stated."""
    dep = run.deployment
    if dep.tp is not None:
        gpus = dep.tp * (dep.pp or 1) * attention_dp(run)
        if dep.gpu_count is not None and dep.gpu_count != gpus:
            flags.append(
                f"gpu_count {dep.gpu_count} differs from TP x PP x attention DP = {gpus}; "
                f"using {gpus}"
            )
        return gpus
    if dep.gpu_count is not None:
        flags.append(f"TP not given; {dep.gpu_count} GPU(s) per replica from its GPU count")
        return dep.gpu_count
    flags.append("GPUs per replica not stated (neither TP nor GPU count): cannot be sized")
    return None


def _whole(text: str | None) -> int | None:
    value = (text or "").strip()
    return int(value) if value.isdigit() else None
