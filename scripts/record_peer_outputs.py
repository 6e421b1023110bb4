"""Record real outputs of the peer benchmark tools against the real vLLM CPU server.

Starts vLLM (the CPU build in .venv-vllm, the tiny random Llama of tests/integration), runs each
installed tool (scripts/install-peer-tools.sh) at each load level, keeps every file each tool
writes under OUT/<tool>/<level>/, and writes beside them record.json (tool version, exact
command, exit status, wall time, files, the numbers the tool printed on stdout) and, for the
whole session, OUT/RECORD.md. Those folders become tests/fixtures/<tool>/real-*/.

    .venv/bin/python scripts/record_peer_outputs.py --out /tmp/peer-outputs \
        [--tools vllm-bench,aiperf,guidellm,inference-perf] [--levels c1:12,c4:16,rate2:12]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from measurements.probe.engines import launch  # noqa: E402
from tests.integration import tiny_model  # noqa: E402
from tests.interop import peer_tools  # noqa: E402
from tests.ports import free_port  # noqa: E402

SERVED_NAME = "tiny-random-llama"


def parse_levels(text: str) -> list[peer_tools.Load]:
    """`c1:12,rate2:12` -> concurrency 1 with 12 requests, 2 req/s with 12 requests."""
    levels = []
    for item in text.split(","):
        name, _, count = item.partition(":")
        kind = "concurrency" if name.startswith("c") else "rate"
        value = float(name.removeprefix("c").removeprefix("rate"))
        levels.append(peer_tools.Load(kind, value, int(count or 12)))
    return levels


def model_dir(python: Path) -> Path:
    """The tiny model, built once per version of tiny_model.py (as the integration tests do)."""
    import hashlib  # noqa: PLC0415
    import subprocess  # noqa: PLC0415

    digest = hashlib.sha256(Path(tiny_model.__file__).read_bytes()).hexdigest()[:12]
    out = Path(tempfile.gettempdir()) / f"capplan-tiny-llama-{digest}"
    if not (out / tiny_model.MARKER_FILE).exists():
        subprocess.run([str(python), tiny_model.__file__, str(out)], check=True, timeout=300)
    return out


def record_markdown(records: list[dict[str, object]]) -> str:
    """One table row per tool run: version, load, exit status, wall time, key printed numbers."""
    lines = ["# Peer tool runs against the vLLM CPU server", ""]
    lines += [
        "| tool | version | load | rc | wall s | files |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for rec in records:
        load = rec["load"]
        assert isinstance(load, dict)
        files = rec["files"]
        assert isinstance(files, list)
        lines.append(
            f"| {rec['tool']} | {rec['version']} | {load['kind']} {load['value']:g} x "
            f"{load['requests']} | {rec['returncode']} | {rec['wall_s']} | {len(files)} |"
        )
    return "\n".join(lines) + "\n"


def main() -> int:
    """Start the server, run the tools, write the records; exit 1 if any tool failed."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--tools", default=",".join(peer_tools.TOOLS))
    parser.add_argument("--levels", default="c1:12,c4:16,rate2:12")
    parser.add_argument("--timeout-s", type=float, default=600)
    parser.add_argument("--base-url", help="use this running server (serving --model) instead")
    parser.add_argument("--model", default=SERVED_NAME, help="the served model name")
    args = parser.parse_args()
    tools = args.tools.split(",")
    for tool in tools:
        why = peer_tools.missing(tool)
        if why:
            print(why, file=sys.stderr)
            return 2
    python = peer_tools.tool_bin("vllm-bench")
    from tests.integration.conftest import launch_spec  # noqa: PLC0415

    directory = model_dir(python)
    spec = launch_spec(python, directory, free_port()).model_copy(
        update={"served_model_name": SERVED_NAME}
    )
    args.out.mkdir(parents=True, exist_ok=True)
    server = None if args.base_url else launch(spec, args.out / "vllm-server.log")
    records: list[dict[str, object]] = []
    try:
        base_url = args.base_url or (server.base_url if server else "")
        target = peer_tools.Target(base_url, args.model, directory)
        for tool in tools:
            for load in parse_levels(args.levels):
                out = args.out / tool / load.name
                done = peer_tools.run(
                    tool, target, load, shape=peer_tools.Shape(), out=out, timeout_s=args.timeout_s
                )
                record = done.record()
                (out / "record.json").write_text(json.dumps(record, indent=2) + "\n")
                records.append(record)
                print(f"{tool} {load.name}: rc={done.returncode} {done.wall_s:.0f} s", flush=True)
    finally:
        if server is not None:
            server.stop(timeout_s=30)
    (args.out / "RECORD.md").write_text(record_markdown(records))
    return 0 if all(rec["returncode"] == 0 for rec in records) else 1


if __name__ == "__main__":
    sys.exit(main())
