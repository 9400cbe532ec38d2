"""The offline model ``llm-tiny``: a tiny random Llama and a character tokenizer built here.

Nothing is downloaded. The vocabulary is every character of the texts it is built from
(the task's prompt and its training and dev examples), most frequent first, ties by code
point, after the special tokens; the tokenizer is a real fast tokenizer (``tokenizers``
WordLevel, one token per character, newlines and spaces included), saved and loaded like
any other. The same texts and seed give the same tokenizer and the same weights.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from typing import Any

from clue_models_llm.settings import TINY

PAD, UNK, BOS, EOS = "<pad>", "<unk>", "<s>", "</s>"
SPECIAL_TOKENS = (PAD, UNK, BOS, EOS)
#: The most characters kept (the samples hold about 3,000 distinct ones).
MAX_VOCAB = 20_000
TINY_DEFAULTS: dict[str, int] = {s.name: s.default for s in TINY}


def build_vocab(texts: Iterable[str], max_size: int = MAX_VOCAB) -> dict[str, int]:
    """Token → id: the special tokens, then characters by falling frequency, ties by code point."""
    counts: Counter[str] = Counter()
    for text in texts:
        counts.update(text)
    vocab = {token: index for index, token in enumerate(SPECIAL_TOKENS)}
    for char in sorted(counts, key=lambda c: (-counts[c], ord(c))):
        if len(vocab) >= max_size:
            break
        vocab.setdefault(char, len(vocab))
    return vocab


def build_tokenizer(texts: Iterable[str], max_size: int = MAX_VOCAB) -> Any:
    """A fast tokenizer with one token per character (unknown characters are ``<unk>``)."""
    from tokenizers import Regex, Tokenizer, decoders, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    backend = Tokenizer(models.WordLevel(build_vocab(texts, max_size), unk_token=UNK))
    backend.pre_tokenizer = pre_tokenizers.Split(Regex(r"[\s\S]"), "isolated")
    backend.decoder = decoders.Fuse()
    return PreTrainedTokenizerFast(tokenizer_object=backend, pad_token=PAD, unk_token=UNK, bos_token=BOS,
                                   eos_token=EOS, model_max_length=1_000_000)


def tiny_config(vocab_size: int, values: Mapping[str, Any], max_positions: int = 4096) -> Any:
    """A small LlamaConfig; sizes come from the ``tiny_*`` settings (defaults for missing ones)."""
    from transformers import LlamaConfig

    from clue_core.plugin import ClueError

    value = {key: int(values.get(key, default)) for key, default in TINY_DEFAULTS.items()}
    if value["tiny_hidden_size"] % value["tiny_num_heads"]:
        raise ClueError(f"setting 'tiny_num_heads' ({value['tiny_num_heads']}) must divide tiny_hidden_size "
                        f"({value['tiny_hidden_size']})")
    return LlamaConfig(
        vocab_size=vocab_size,
        hidden_size=value["tiny_hidden_size"],
        intermediate_size=value["tiny_intermediate_size"],
        num_hidden_layers=value["tiny_num_layers"],
        num_attention_heads=value["tiny_num_heads"],
        num_key_value_heads=value["tiny_num_heads"],
        max_position_embeddings=max_positions,
        tie_word_embeddings=True,
        pad_token_id=SPECIAL_TOKENS.index(PAD),
        bos_token_id=SPECIAL_TOKENS.index(BOS),
        eos_token_id=SPECIAL_TOKENS.index(EOS),
    )


def build_model(texts: Iterable[str], values: Mapping[str, Any], seed: int) -> tuple[Any, Any]:
    """``(model, tokenizer)``: random weights drawn with ``seed``, in float32 on the CPU."""
    import torch
    from transformers import LlamaForCausalLM

    tokenizer = build_tokenizer(texts)
    config = tiny_config(len(tokenizer), values)
    generator_state = torch.random.get_rng_state()
    torch.manual_seed(seed)
    try:
        model = LlamaForCausalLM(config)
    finally:
        torch.random.set_rng_state(generator_state)
    model.eval()
    return model, tokenizer
