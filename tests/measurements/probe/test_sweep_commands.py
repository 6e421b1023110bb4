"""The measurement plan's command lines are accepted by the tools they call: capplan's own
`probe` and `import` (parsed by the real Typer app, the probe line checked as a ProbeRequest),
`vllm bench serve` (vLLM 0.32's parser when .venv-vllm is here; always its recorded help) and
`aiperf profile` (AIPerf 0.13's recorded help); the loops run in bash with the tool stubbed."""

from __future__ import annotations

import json
import re
import shlex
import subprocess
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

import workflows.probe
from cli import app
from errors import InputError
from measurements.probe import sweep_commands as cmd
from measurements.probe.request import ProbeRequest
from measurements.probe.sweep_commands import SweepSpec

ROOT = Path(__file__).resolve().parents[3]
HELP = ROOT / "tests" / "fixtures" / "cli-help"
VLLM_PYTHON = ROOT / ".venv-vllm" / "bin" / "python"
SPECS = [
    SweepSpec("vllm", "meta-llama/Llama-3.1-70B-Instruct", "fp8", "H100-SXM-80GB", 2, 3000, 300,
              (1, 2, 4, 8, 16, 32, 64)),
    SweepSpec("tensorrt-llm", "meta-llama/Llama-3.1-70B-Instruct", "fp8", "H200-SXM-141GB", 1,
              3000, 300, (1, 2, 4)),
    SweepSpec("sglang", "Qwen/Qwen3-32B", None, "H100-SXM-80GB", 4, 1024, 128, (1, 2)),
]  # fmt: skip


def _parsed(line: str, name: str) -> dict[str, object]:
    """The parameters typer's own parser gives the `capplan NAME` command for a line."""
    argv = shlex.split(line)
    assert argv[:2] == ["capplan", name]
    command = getattr(typer.main.get_command(app), "commands", {})[name]
    with command.make_context(name, argv[2:]) as ctx:
        return dict(ctx.params)


def _probed(line: str, monkeypatch: pytest.MonkeyPatch) -> ProbeRequest:
    """The ProbeRequest `capplan probe` builds from a line, run through CliRunner up to the
    sweep (which a stand-in replaces)."""
    requests: list[ProbeRequest] = []

    def stand_in(request: ProbeRequest, **_: object) -> None:
        requests.append(request)
        raise InputError("stopped by the test")

    monkeypatch.setattr(workflows.probe, "probe_endpoint", stand_in)
    argv = shlex.split(line)
    result = CliRunner().invoke(app, argv[1:])
    assert result.exit_code == 2 and "stopped by the test" in result.output, result.output
    (request,) = requests
    return request


@pytest.mark.parametrize("spec", SPECS, ids=lambda s: s.engine)
def test_the_probe_line_is_a_valid_capplan_probe_request(
    spec: SweepSpec, monkeypatch: pytest.MonkeyPatch
) -> None:
    request = _probed(cmd.probe_line(spec), monkeypatch)
    assert request.concurrencies == spec.concurrencies
    assert (request.isl_tokens, request.osl_tokens) == (spec.isl, spec.osl)
    assert (request.gpu, request.tp, request.precision) == (spec.gpu, spec.tp, spec.precision)
    launch = request.launch_spec()
    if spec.engine == "sglang":  # not launched by capplan: attach to the server on :8000
        assert launch is None and request.base_url == spec.base_url
        return
    assert launch is not None and launch.port == cmd.PORT and launch.command is not None
    tp_flag = "--tensor-parallel-size" if spec.engine == "vllm" else "--tp_size"
    assert launch.command[launch.command.index(tp_flag) + 1] == str(spec.tp)


def test_vllm_serves_an_fp8_scenario_from_a_16_bit_checkpoint_by_quantizing_on_load() -> None:
    vllm, trtllm, _ = SPECS
    assert "--quantization fp8" in (cmd.server_line(vllm) or "")
    assert "--quantization" not in (cmd.server_line(trtllm) or "")
    checkpoint = SweepSpec("vllm", "nvidia/Llama-3.1-70B-Instruct-FP8", "fp8", "H100-SXM-80GB",
                           2, 3000, 300, (1,))  # fmt: skip
    assert "--quantization" not in (cmd.server_line(checkpoint) or "")


@pytest.mark.parametrize("spec", SPECS[:2], ids=lambda s: s.engine)
def test_the_import_lines_parse_as_capplan_import_with_the_deployment(spec: SweepSpec) -> None:
    line = cmd.import_line(spec, "vllm-bench-c*.json")
    params = _parsed(line, "import")
    assert params["gpu"] == spec.gpu and params["tp"] == spec.tp
    assert params["engine_name"] == spec.engine


def _loop_runs(line: str, tool: str) -> list[list[str]]:
    """Run a loop line in bash with `tool` stubbed to print its argv one word a line."""
    stub = f'{tool}() {{ printf "%s\\n" "$@"; echo ---; }}; {line}'
    done = subprocess.run(["bash", "-c", stub], capture_output=True, text=True, check=True)
    runs = done.stdout.strip().split("---")
    return [run.strip().splitlines() for run in runs if run.strip()]


def _flags(argv: list[str]) -> set[str]:
    return {word for word in argv if word.startswith("--")}


def _help_flags(name: str) -> set[str]:
    return set(re.findall(r"(--[a-z][a-z0-9-]*)", (HELP / name).read_text()))


def test_the_vllm_bench_loop_runs_one_level_per_concurrency_with_the_probes_request_count() -> None:
    spec = SPECS[0]
    runs = _loop_runs(cmd.vllm_bench_line(spec), "vllm")
    assert len(runs) == len(spec.concurrencies)
    for concurrency, argv in zip(spec.concurrencies, runs, strict=True):
        assert argv[:2] == ["bench", "serve"]
        assert argv[argv.index("--max-concurrency") + 1] == str(concurrency)
        requests = argv[argv.index("--num-prompts") + 1]
        assert int(requests) == cmd.requests_per_level(concurrency) == max(32, 8 * concurrency)
        assert argv[argv.index("--result-filename") + 1] == f"vllm-bench-c{concurrency}.json"
        assert _flags(argv) <= _help_flags("vllm-0.32.0-bench-serve-help.txt")


def test_the_aiperf_loop_uses_only_aiperf_profile_flags() -> None:
    spec = SPECS[1]
    runs = _loop_runs(cmd.aiperf_line(spec), "aiperf")
    assert [run[run.index("--concurrency") + 1] for run in runs] == ["1", "2", "4"]
    known = _help_flags("aiperf-0.13.0-profile-help.txt")
    for argv in runs:
        assert argv[0] == "profile"
        assert _flags(argv) <= known, _flags(argv) - known
        assert argv[argv.index("--isl") + 1] == "3000" and argv[argv.index("--osl") + 1] == "300"


def test_the_help_fixtures_would_catch_a_flag_the_tools_do_not_have() -> None:
    assert "--max-concurrency" in _help_flags("vllm-0.32.0-bench-serve-help.txt")
    assert "--num-prompt" not in _help_flags("vllm-0.32.0-bench-serve-help.txt")
    assert "--input-tokens-mean" not in _help_flags("aiperf-0.13.0-profile-help.txt")


@pytest.mark.slow  # importing vLLM takes about 20 s
@pytest.mark.skipif(not VLLM_PYTHON.exists(), reason="no .venv-vllm with vLLM's own parser")
def test_vllm_own_parser_accepts_the_bench_lines() -> None:
    argvs = [run[2:] for spec in SPECS for run in _loop_runs(cmd.vllm_bench_line(spec), "vllm")]
    script = (
        "import argparse, json, sys\n"
        "from vllm.benchmarks.serve import add_cli_args\n"
        "parser = argparse.ArgumentParser(); add_cli_args(parser)\n"
        "for argv in json.load(sys.stdin):\n"
        "    args = parser.parse_args(argv)\n"
        "    print(args.max_concurrency, args.num_prompts, args.random_input_len)\n"
    )
    done = subprocess.run(
        [str(VLLM_PYTHON), "-c", script],
        input=json.dumps(argvs),
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    first = done.stdout.splitlines()[0].split()
    assert first == ["1", "32", "3000"]
