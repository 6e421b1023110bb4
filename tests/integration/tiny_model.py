"""Write a tiny random-weight Llama and a BPE tokenizer trained here, for a real vLLM on CPU.

Run with the vLLM virtualenv's python (it needs torch and transformers): `python tiny_model.py DIR`.
The main virtualenv only imports the constants (to name the model and check its files).
"""

from __future__ import annotations

import random
import sys
from pathlib import Path

VOCAB_SIZE = 1024
HIDDEN_SIZE = 256
LAYERS = 2
HEADS = 4
# head dim 64: the CPU attention backend rejects 16 ("Unsupported CPU attention configuration").
HEAD_DIM = 64
INTERMEDIATE_SIZE = 512
MAX_POSITIONS = 2048
SEED = 0
MARKER_FILE = "capplan-tiny-model.txt"
CHAT_TEMPLATE = (
    "{% for m in messages %}<|{{ m['role'] }}|> {{ m['content'] }}\n{% endfor %}"
    "{% if add_generation_prompt %}<|assistant|> {% endif %}"
)
_SYLLABLES = (*(c + v for c in "bcdfghklmnprstvwz" for v in "aeiou"), "th", "sh", "ng")


def training_corpus(lines: int = 3000, seed: int = SEED) -> list[str]:
    """Seeded pseudo-words with a Zipf-like mix: variety enough for ~1000 BPE merges."""
    rng = random.Random(seed)
    words = ["".join(rng.choices(_SYLLABLES, k=rng.randint(1, 4))) for _ in range(3000)]
    weights = [1.0 / (rank + 1) for rank in range(len(words))]
    return [" ".join(rng.choices(words, weights, k=rng.randint(5, 30))) for _ in range(lines)]


def write_tokenizer(out_dir: Path) -> int:
    """Train a byte-level BPE tokenizer, save it the transformers way; return its vocab size."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    tok = Tokenizer(models.BPE(unk_token=None))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=VOCAB_SIZE,
        special_tokens=["<s>", "</s>"],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
    )
    tok.train_from_iterator(training_corpus(), trainer=trainer)
    # No post-processor: a prompt's token count is exactly len(encode(prompt)), with no BOS added.
    fast = PreTrainedTokenizerFast(
        tokenizer_object=tok, bos_token="<s>", eos_token="</s>", model_max_length=MAX_POSITIONS
    )
    fast.chat_template = CHAT_TEMPLATE
    fast.save_pretrained(str(out_dir))
    return len(fast)


def write_model(out_dir: Path, vocab_size: int) -> None:
    """Save a 2-layer Llama with seeded random weights in bfloat16."""
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(SEED)
    config = LlamaConfig(
        vocab_size=vocab_size,
        hidden_size=HIDDEN_SIZE,
        intermediate_size=INTERMEDIATE_SIZE,
        num_hidden_layers=LAYERS,
        num_attention_heads=HEADS,
        num_key_value_heads=HEADS,
        head_dim=HEAD_DIM,
        max_position_embeddings=MAX_POSITIONS,
        bos_token_id=0,
        eos_token_id=1,
        tie_word_embeddings=False,
        dtype="bfloat16",
    )
    model = LlamaForCausalLM(config).to(torch.bfloat16)
    model.save_pretrained(str(out_dir))


def build(out_dir: Path) -> Path:
    """Write tokenizer and model into out_dir; the marker file is written last (complete build)."""
    out_dir.mkdir(parents=True, exist_ok=True)
    write_model(out_dir, write_tokenizer(out_dir))
    (out_dir / MARKER_FILE).write_text(f"seed={SEED} vocab={VOCAB_SIZE}\n", encoding="utf-8")
    return out_dir


def main(argv: list[str]) -> int:
    """Entry point: `python tiny_model.py OUT_DIR`."""
    if len(argv) != 2:
        print("usage: python tiny_model.py OUT_DIR", file=sys.stderr)
        return 2
    print(build(Path(argv[1])))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
