"""The offline backbone: a tiny randomly initialised BERT and a character vocabulary.

It needs no download at all, so the README's demo, the tests and the benchmarks run on a
clean machine. The vocabulary is built from the training texts: every character becomes
a token (``"##c"`` continuations too for non-CJK characters, so Latin words split into
letters), most frequent first, ties by code point, so the same texts always give the same
vocabulary and therefore the same model for the same seed.
"""

from __future__ import annotations

import unicodedata
from collections import Counter
from collections.abc import Iterable, Mapping
from typing import Any

from clue_models_hf.settings import TINY

SPECIAL_TOKENS = ("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]")

#: Defaults of the ``tiny_*`` settings (declared in :data:`clue_models_hf.settings.TINY`).
TINY_DEFAULTS: dict[str, int] = {s.name: s.default for s in TINY}


def _is_cjk(char: str) -> bool:
    code = ord(char)
    return (
        0x4E00 <= code <= 0x9FFF or 0x3400 <= code <= 0x4DBF or 0x20000 <= code <= 0x2FA1F
        or 0xF900 <= code <= 0xFAFF
    )


def _is_punctuation(char: str) -> bool:
    """BERT's pre-tokenizer splits punctuation off as whole tokens, never as ``##`` pieces."""
    code = ord(char)
    if 33 <= code <= 47 or 58 <= code <= 64 or 91 <= code <= 96 or 123 <= code <= 126:
        return True
    return unicodedata.category(char).startswith("P")


def build_vocab(texts: Iterable[str], max_size: int = TINY_DEFAULTS["tiny_vocab_size"],
                required: Iterable[str] = ()) -> dict[str, int]:
    """Token → id: the special tokens, then characters by falling frequency, ties by code point.

    The characters of ``required`` texts (PET's prompt and verbalisers, which a cloze must be
    able to say) come first, whatever their frequency, so ``tiny_vocab_size`` never drops them.
    """
    counts: Counter[str] = Counter()
    for text in texts:
        counts.update(text.lower())
    must = sorted({c for text in required for c in text.lower()}, key=ord)
    vocab = {token: index for index, token in enumerate(SPECIAL_TOKENS)}
    ranked = sorted((c for c in counts if not c.isspace() and unicodedata.category(c)[0] != "C"),
                    key=lambda c: (-counts[c], ord(c)))
    ranked = [c for c in must if not c.isspace() and unicodedata.category(c)[0] != "C"] + ranked
    for char in ranked:
        if len(vocab) >= max_size:
            break
        vocab.setdefault(char, len(vocab))
        if not _is_cjk(char) and not _is_punctuation(char) and len(vocab) < max_size:
            vocab.setdefault("##" + char, len(vocab))
    return vocab


def build_tokenizer(texts: Iterable[str], max_size: int = TINY_DEFAULTS["tiny_vocab_size"],
                    required: Iterable[str] = ()) -> Any:
    """A BERT WordPiece tokenizer (fast, with offsets) over a character vocabulary."""
    from transformers import BertTokenizer

    return BertTokenizer(vocab=build_vocab(texts, max_size, required), do_lower_case=True, strip_accents=False,
                         tokenize_chinese_chars=True, model_max_length=100_000)


def tiny_config(vocab_size: int, config: Mapping[str, Any], max_length: int, **head: Any) -> Any:
    """A small BertConfig; sizes come from the ``tiny_*`` settings (defaults for missing ones)."""
    from transformers import BertConfig

    value = {key: int(config.get(key, default)) for key, default in TINY_DEFAULTS.items()}
    return BertConfig(
        vocab_size=vocab_size,
        hidden_size=value["tiny_hidden_size"],
        num_hidden_layers=value["tiny_num_layers"],
        num_attention_heads=value["tiny_num_heads"],
        intermediate_size=value["tiny_intermediate_size"],
        max_position_embeddings=max(512, max_length),
        type_vocab_size=2,
        hidden_dropout_prob=0.1,
        attention_probs_dropout_prob=0.1,
        **head,
    )
