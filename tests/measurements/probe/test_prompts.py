"""Prompt lengths (exact for a tokenizer, else calibrated), length distributions and lengths
files, the agent-loop shape and prefix sharing; lengths are checked by encoding with
`tokenizers` directly, distributions by their sample moments."""

from __future__ import annotations

import itertools
import statistics
from pathlib import Path

import numpy as np
import pytest
from pydantic import ValidationError
from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors, trainers

from errors import InputError
from measurements.probe.prompts import (
    WORDS,
    PromptFactory,
    PromptSpec,
    load_tokenizer,
    read_lengths_file,
)
from measurements.probe.workloads import WorkloadConfig, run_workload


@pytest.fixture(scope="module")
def tokenizer_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A byte-level BPE trained here (600 tokens: some words split in several) that adds BOS."""
    tok = Tokenizer(models.BPE(unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=600,
        special_tokens=["<s>", "[UNK]"],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    rng = np.random.default_rng(0)
    tok.train_from_iterator([" ".join(rng.choice(WORDS, 12)) for _ in range(400)], trainer)
    bos = tok.token_to_id("<s>")
    tok.post_processor = processors.TemplateProcessing(
        single="<s> $A", special_tokens=[("<s>", bos)]
    )
    folder = tmp_path_factory.mktemp("tiny-model")
    tok.save(str(folder / "tokenizer.json"))
    return folder


def server_count(tokenizer_dir: Path, text: str) -> int:
    """What a server with this tokenizer reports as prompt_tokens (independent of capplan)."""
    return len(Tokenizer.from_file(str(tokenizer_dir / "tokenizer.json")).encode(text).ids)


@pytest.mark.parametrize("isl", [2, 17, 128, 1000])
def test_prompts_are_exactly_isl_tokens_for_the_tokenizer(tokenizer_dir: Path, isl: int) -> None:
    factory = PromptFactory(WorkloadConfig(isl=isl, osl=8), load_tokenizer(str(tokenizer_dir)))
    rng = np.random.default_rng(1)
    prompts = [factory.next_prompt(rng) for _ in range(10)]
    assert [server_count(tokenizer_dir, p.prompt) for p in prompts] == [isl] * 10
    assert all(p.input_tokens == isl and p.max_tokens == 8 for p in prompts)
    if isl > 10:  # one-word prompts may repeat by chance; longer ones never share a prompt
        assert len({p.prompt for p in prompts}) == 10
    assert factory.misses == 0 and "exact" in factory.describe()


def test_calibration_corrects_what_the_server_adds_to_the_prompt(tokenizer_dir: Path) -> None:
    template_tokens = 22  # e.g. a chat template around the user message
    factory = PromptFactory(WorkloadConfig(isl=128, osl=8), load_tokenizer(str(tokenizer_dir)))
    rng = np.random.default_rng(2)
    first = factory.next_prompt(rng)
    factory.calibrate(server_count(tokenizer_dir, first.prompt) + template_tokens, first)
    later = factory.next_prompt(rng)
    assert server_count(tokenizer_dir, later.prompt) + template_tokens == 128
    assert "server adds 22 tokens" in factory.describe()


def test_without_a_tokenizer_lengths_are_calibrated_from_prompt_tokens() -> None:
    def server(prompt: PromptSpec) -> int:  # a server whose tokenizer splits every word in 2
        return 2 * len(prompt.prompt.split()) + 1

    factory = PromptFactory(WorkloadConfig(isl=300, osl=8), None)
    rng = np.random.default_rng(3)
    first = factory.next_prompt(rng)
    assert "estimated" in factory.describe() and not factory.calibrated
    factory.calibrate(server(first), first)
    counts = [server(factory.next_prompt(rng)) for _ in range(5)]
    assert all(abs(count - 300) <= 2 for count in counts)
    assert factory.calibrated and "calibrated" in factory.describe()


def test_load_tokenizer_reads_the_hf_cache_and_never_invents_one(
    tokenizer_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    snapshot = tmp_path / "models--acme--tiny" / "snapshots" / "abc123"
    snapshot.mkdir(parents=True)
    (snapshot / "tokenizer.json").write_bytes((tokenizer_dir / "tokenizer.json").read_bytes())
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path))
    found = load_tokenizer("acme/tiny")
    assert found is not None
    assert found.encode("the model") == [
        *Tokenizer.from_file(str(tokenizer_dir / "tokenizer.json")).encode("the model").ids
    ]
    assert load_tokenizer("acme/absent") is None
    assert load_tokenizer(str(tmp_path / "no-such-dir")) is None


def test_a_broken_tokenizer_file_names_the_file(tmp_path: Path) -> None:
    (tmp_path / "tokenizer.json").write_text("{not json", encoding="utf-8")
    with pytest.raises(InputError, match=r"tokenizer\.json"):
        load_tokenizer(str(tmp_path))


def test_agent_loop_turns_extend_the_previous_prompt(tokenizer_dir: Path) -> None:
    config = WorkloadConfig(
        isl=1,
        osl=20,
        shape="agent-loop",
        agent_context_tokens=300,
        agent_turn_tokens=50,
        agent_turns=4,
    )
    factory = PromptFactory(config, load_tokenizer(str(tokenizer_dir)))
    rng = np.random.default_rng(4)
    turns = [factory.next_prompt(rng) for _ in range(5)]
    assert [(t.conversation, t.turn) for t in turns] == [(0, 0), (0, 1), (0, 2), (0, 3), (1, 0)]
    assert [server_count(tokenizer_dir, t.prompt) for t in turns[:4]] == [300, 370, 440, 510]
    session = turns[:4]
    assert all(b.prompt.startswith(a.prompt) for a, b in itertools.pairwise(session))
    workload = run_workload(config, ignore_eos=True)
    assert workload.isl == 405 and workload.dataset is not None and "agent-loop" in workload.dataset


def test_prefix_sharing_opens_every_prompt_with_one_prefix(tokenizer_dir: Path) -> None:
    config = WorkloadConfig(isl=200, osl=8, prefix_sharing=True, shared_prefix_tokens=150)
    factory = PromptFactory(config, load_tokenizer(str(tokenizer_dir)))
    rng = np.random.default_rng(5)
    prompts = [factory.next_prompt(rng).prompt for _ in range(4)]
    prefix = prompts[0][: len(prompts[0]) // 2]
    assert all(p.startswith(prefix) for p in prompts) and len(set(prompts)) == 4
    assert [server_count(tokenizer_dir, p) for p in prompts] == [200] * 4
    with pytest.raises(ValidationError, match="shared_prefix_tokens"):
        WorkloadConfig(isl=200, osl=8, prefix_sharing=True, shared_prefix_tokens=200)


def test_normal_and_lognormal_lengths_have_the_configured_moments() -> None:
    rng = np.random.default_rng(6)
    for kind in ("normal", "lognormal"):
        config = WorkloadConfig(isl=1000, osl=200, isl_distribution=kind, isl_stddev=150)
        factory = PromptFactory(config, None)
        lengths = [factory._lengths(rng)[0] for _ in range(4000)]
        assert statistics.mean(lengths) == pytest.approx(1000, rel=0.02)
        assert statistics.stdev(lengths) == pytest.approx(150, rel=0.08)


def test_lengths_from_a_file_are_its_rows(tmp_path: Path) -> None:
    path = tmp_path / "lengths.csv"
    path.write_text("input_tokens,output_tokens\n100,10\n2000,300\n", encoding="utf-8")
    config = WorkloadConfig(
        isl=1, osl=1, isl_distribution="file", osl_distribution="file", lengths_file=path
    )
    rng = np.random.default_rng(7)
    factory = PromptFactory(config, None)
    assert {factory._lengths(rng) for _ in range(50)} == {(100, 10), (2000, 300)}
    assert read_lengths_file(path) == ((100, 10), (2000, 300))
    path.write_text("100,10\n5,x\n", encoding="utf-8")
    with pytest.raises(InputError, match="line 3") as caught:
        read_lengths_file(path)
    assert caught.value.value == "5,x"
    with pytest.raises(ValidationError, match="lengths_file"):
        WorkloadConfig(isl=1, osl=1, isl_distribution="file")
