"""Secrets typed into a launch command never come back out: not in the stored command, the
server log's `$` line, error messages (with the log tail they quote) or InputError values."""

from __future__ import annotations

import asyncio
import shlex
import sys
from pathlib import Path

import pytest

from errors import InputError
from measurements.probe.engines import EngineError, RunningServer, launch
from measurements.probe.launch_spec import LaunchSpec
from measurements.probe.redaction import (
    redact_command,
    redact_text,
    remember_command_secrets,
    remember_secret,
)
from measurements.probe.request import ProbeRequest
from measurements.probe.session import run_session

KEY = "sk-LEAK-123"


@pytest.mark.parametrize(
    ("command", "shown"),
    [
        (
            "HF_TOKEN=hf_secret123 VLLM_API_KEY=sk-live-1 vllm serve m",
            "'HF_TOKEN=***' 'VLLM_API_KEY=***' vllm serve m",
        ),
        (
            "PGPASSWORD=pw AWS_SECRET_ACCESS_KEY=a vllm serve m",
            "'PGPASSWORD=***' 'AWS_SECRET_ACCESS_KEY=***' vllm serve m",
        ),
        (
            f"vllm serve m --api-key {KEY} --token t1 --hf-token=hf_x --password=pw --port 8",
            "vllm serve m --api-key '***' --token '***' '--hf-token=***' '--password=***' --port 8",
        ),
        (
            f'docker run -e HF_TOKEN={KEY} -H "Authorization: Bearer {KEY}" img',
            "docker run -e 'HF_TOKEN=***' -H 'Authorization: Bearer ***' img",
        ),
        (
            f"serve --base-url=http://u:{KEY}@h:1/v1?api_key={KEY}&x=1",
            "serve '--base-url=http://u:***@h:1/v1?api_key=***&x=1'",
        ),
        (f'vllm serve m --api-key "{KEY} --port 8', "vllm serve m --api-key *** --port 8"),
        # Nothing secret: returned exactly as typed (quoting kept).
        (
            'TOKENIZERS_PARALLELISM=false vllm serve "m 1" --max-num-batched-tokens 8192 '
            "--tokenizer t --ssl-keyfile k.pem --api-key-file f",
            'TOKENIZERS_PARALLELISM=false vllm serve "m 1" --max-num-batched-tokens 8192 '
            "--tokenizer t --ssl-keyfile k.pem --api-key-file f",
        ),
    ],
    ids=["env", "env-more", "flags", "docker", "url", "unbalanced", "no-secret"],
)
def test_redact_command_masks_env_prefixes_flags_headers_and_urls(command: str, shown: str) -> None:
    assert redact_command(command) == shown
    assert redact_command(shown) == shown  # masking twice changes nothing


def test_redact_text_masks_what_servers_print_about_their_arguments() -> None:
    log = (
        f"INFO non-default args: {{'model': 'm', 'api_key': ['{KEY}'], 'port': 8000}}\n"
        f"argv ['-c', '--api-key', '{KEY}', '--tokenizer', 't'] HF_TOKEN={KEY}\n"
        f'{{"hf_token": "{KEY}", "max_tokens": 8}} Namespace(api_key=\'{KEY}\', tp=1)\n'
        f"GET http://u:{KEY}@h/x?token={KEY}&y=2 --password {KEY} --max-num-batched-tokens 8"
    )
    assert redact_text(log).splitlines() == [
        "INFO non-default args: {'model': 'm', 'api_key': '***', 'port': 8000}",
        "argv ['-c', '--api-key', '***', '--tokenizer', 't'] HF_TOKEN=***",
        '{"hf_token": \'***\', "max_tokens": 8} Namespace(api_key=***, tp=1)',
        "GET http://u:***@h/x?token=***&y=2 --password *** --max-num-batched-tokens 8",
    ]


def _request(tmp_path: Path, launch_command: str) -> ProbeRequest:
    return ProbeRequest(
        launch_command=launch_command,
        engine="vllm",
        model="m",
        isl_tokens=8,
        osl_tokens=8,
        concurrencies="1",
        out_path=tmp_path / "run.json",
    )


def test_a_launch_command_without_port_is_quoted_masked(tmp_path: Path) -> None:
    with pytest.raises(InputError) as caught:
        _request(tmp_path, f"HF_TOKEN={KEY} vllm serve m --api-key {KEY}")
    assert "must say --port N" in str(caught.value)
    assert "'HF_TOKEN=***' vllm serve m --api-key '***'" in str(caught.value)
    assert KEY not in str(caught.value) and KEY not in repr(caught.value.value)
    with pytest.raises(InputError) as unbalanced:
        _request(tmp_path, f'vllm serve m --api-key "{KEY}')
    assert "not a shell command line" in str(unbalanced.value) and KEY not in str(unbalanced.value)
    with pytest.raises(InputError) as bad_port:  # pydantic's error quotes the value: masked
        _request(tmp_path, f"vllm serve m --port 99999 --token {KEY}")
    assert bad_port.value.field == "launch_command" and "port" in str(bad_port.value)
    assert KEY not in str(bad_port.value)


def test_leading_assignments_go_to_the_server_environment_not_its_argv(tmp_path: Path) -> None:
    launch = _request(
        tmp_path, f"HF_TOKEN={KEY} VLLM_USE_V1=1 vllm serve m --port 8123"
    ).launch_spec()
    assert launch is not None
    assert launch.env == {"HF_TOKEN": KEY, "VLLM_USE_V1": "1"}
    assert launch.command == ("vllm", "serve", "m", "--port", "8123")
    server = RunningServer("http://h:1", command=list(launch.command), env=launch.env)
    assert server.launch_command == "'HF_TOKEN=***' VLLM_USE_V1=1 vllm serve m --port 8123"


def test_a_launched_server_log_and_its_error_never_show_the_key(tmp_path: Path) -> None:
    # The "server" prints its arguments the way vLLM does, says whether it got the env key,
    # then dies: the EngineError quotes the log tail.
    code = (
        "import os, sys; print('non-default args:', {'api_key': [sys.argv[2]]}); "
        "print('env ok', os.environ.get('HF_TOKEN') == sys.argv[2], flush=True); sys.exit(3)"
    )
    spec = LaunchSpec(
        engine="other",
        model="m",
        command=(sys.executable, "-c", code, "--api-key", KEY, "--port", "9"),
        port=9,
        env={"HF_TOKEN": KEY},
        health_timeout_s=60,
    )
    log_path = tmp_path / "server.log"
    with pytest.raises(EngineError) as caught:
        launch(spec, log_path, gpu_probe=lambda: None)
    message = str(caught.value)
    assert "exited with code 3" in message
    assert "env ok True" in message  # the key did reach the server, through its environment
    assert "non-default args: {'api_key': '***'}" in message
    assert KEY not in message
    first = log_path.read_text(encoding="utf-8").splitlines()[0]
    masked = [sys.executable, "-c", code, "--api-key", "***", "--port", "9"]
    assert first == f"$ {shlex.join(masked)}"


def test_short_key_flags_header_values_and_key_shapes_are_masked() -> None:
    assert redact_command("serve m -k s3cr3t-value --port 8 -K=other") == (
        "serve m -k '***' --port 8 '-K=***'"
    )
    text = redact_text(
        "client -k s3cr3t-value; Authorization: Basic dXNlcjpwYXNz; x-api-key: abcdef; "
        '{"authorization": "tok12345"}; sk-live0123456 hf_abcdefghij'
    )
    assert text == (
        'client -k ***; Authorization: Basic ***; x-api-key: ***; {"authorization": "***"}; *** ***'
    )
    assert redact_text("disk-cache-size and task-manager") == "disk-cache-size and task-manager"


def test_a_remembered_secret_is_masked_however_it_is_echoed() -> None:
    remember_command_secrets(["serve", "--api-key", "raw-remembered-1"], {"HF_TOKEN": "raw-env-2"})
    remember_secret("raw-probe-key-3")
    echoed = "got raw-remembered-1, raw-env-2 and raw-probe-key-3 back"
    assert redact_text(echoed) == "got ***, *** and *** back"
    remember_secret("abc")  # too short to mask safely: ordinary words stay
    assert redact_text("abc def") == "abc def"


def test_a_launched_server_printing_its_key_bare_is_masked_in_the_error(tmp_path: Path) -> None:
    # No flag, no key shape: the server prints the bare key, then dies. The session remembered
    # the launch command's secrets before starting it, so the log tail it quotes is masked.
    bare = "bare-launch-key-5150"
    code = "import sys; print('serving with', sys.argv[sys.argv.index('-k') + 1]); sys.exit(3)"
    request = ProbeRequest(
        model="m",
        isl_tokens=8,
        osl_tokens=4,
        out_path=tmp_path / "run.json",
        engine="other",
        launch_command=shlex.join([sys.executable, "-c", code, "-k", bare, "--port", "9"]),
        concurrencies=(1,),
    )
    with pytest.raises(EngineError) as caught:
        asyncio.run(run_session(request))
    assert "serving with ***" in str(caught.value) and bare not in str(caught.value)
    assert bare not in (tmp_path / "run.server.log").read_text(encoding="utf-8").splitlines()[0]
