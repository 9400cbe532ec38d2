"""Whole-word masking for Chinese: words from a segmenter, masked with all their tokens.

Chinese BERT vocabularies cut Chinese text into single characters, so token-level masking
mostly asks the model to guess one character of a word from the others. Whole-word
masking (the method of the CLUE baselines BERT-wwm and RoBERTa-wwm-ext) segments each
sentence into words and masks every token of a chosen word together.

Two parts:

* :class:`WordEncoder` tokenizes sentences and marks each token that continues the word
  of the token before it (the role of the ``##`` prefix in English WordPiece). Words come
  from jieba (imported on first use: it loads its dictionary, about a second); tokens are
  mapped onto words by their character offsets, so any fast tokenizer works, whatever it
  does with Latin letters or digits.
* :func:`mask_sequence` draws the words of one sequence: words in a random order until
  ``probability`` of the real tokens are covered (a word that would overshoot is passed
  over, as in BERT's reference code), then per chosen *word* 80% ``[MASK]`` on all of its
  tokens, 10% a random token each, 10% unchanged. Its generator is seeded per sequence by
  the caller, so masks do not depend on batch composition, processes or resumes.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

#: Labels the loss ignores (PyTorch's cross-entropy default).
IGNORE = -100
MASK_SHARE, RANDOM_SHARE = 0.8, 0.1


class WordEncoder:
    """Token ids and continuation flags of sentences, words from jieba (or one word per token)."""

    def __init__(self, tokenizer: Any, whole_words: bool = True) -> None:
        if not getattr(tokenizer, "is_fast", False):
            raise TypeError("whole-word masking maps words by character offsets and needs a fast tokenizer")
        self.tokenizer = tokenizer
        self.whole_words = whole_words
        self._cut: Any = None

    def _segment(self, sentence: str) -> list[str]:
        if self._cut is None:
            import logging

            import jieba

            jieba.setLogLevel(logging.WARNING)
            self._cut = jieba.Tokenizer()
            self._cut.initialize()
        return self._cut.lcut(sentence)

    def encode(self, sentences: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
        """(ids, continues) of the sentences one after another, no special tokens.

        ``continues[t]`` is True when token ``t`` belongs to the same word as token ``t-1``;
        the first token of every sentence starts a word.
        """
        if not sentences:
            return np.zeros(0, np.int64), np.zeros(0, bool)
        encoded = self.tokenizer(list(sentences), add_special_tokens=False, split_special_tokens=True,
                                 return_offsets_mapping=True,
                                 return_attention_mask=False, return_token_type_ids=False)
        ids, flags = [], []
        for sentence, tokens, offsets in zip(sentences, encoded["input_ids"], encoded["offset_mapping"]):
            if not tokens:
                continue
            starts = np.fromiter((o[0] for o in offsets), np.int64, len(offsets))
            if self.whole_words:
                ends = np.cumsum([len(w) for w in self._segment(sentence)])
                word = np.searchsorted(ends, starts, side="right")
            else:
                word = np.arange(len(tokens))
            continues = np.empty(len(tokens), bool)
            continues[0] = False
            continues[1:] = word[1:] == word[:-1]
            ids.append(np.asarray(tokens, np.int64))
            flags.append(continues)
        if not ids:
            return np.zeros(0, np.int64), np.zeros(0, bool)
        return np.concatenate(ids), np.concatenate(flags)


def word_ids(continues: np.ndarray, special: np.ndarray) -> np.ndarray:
    """Word number of every position (-1 for special tokens); a special token ends a word."""
    starts = ~continues
    if len(special):
        starts[1:] |= special[:-1]
    starts &= ~special
    number = np.cumsum(starts) - 1
    return np.where(special, -1, number)


def mask_sequence(ids: np.ndarray, continues: np.ndarray, special: np.ndarray, rng: np.random.Generator,
                  mask_id: int, random_ids: np.ndarray, probability: float = 0.15
                  ) -> tuple[np.ndarray, np.ndarray]:
    """(inputs, labels) of one sequence under whole-word masking; see the module doc.

    ``special`` marks positions never masked ([CLS], [SEP], padding); ``random_ids`` are the
    ids a "random token" is drawn from (the vocabulary without special tokens).
    """
    inputs, labels = ids.copy(), np.full(ids.shape, IGNORE, np.int64)
    words = word_ids(continues, special)
    count = int(words.max()) + 1 if len(words) else 0
    real = int((~special).sum())
    if not count or not real:
        return inputs, labels
    budget = max(1, round(real * probability))
    sizes = np.bincount(words[words >= 0], minlength=count)
    chosen = np.zeros(count, bool)
    covered = 0
    for word in rng.permutation(count):
        size = int(sizes[word])
        if covered + size > budget:
            continue
        chosen[word] = True
        covered += size
        if covered >= budget:
            break
    action = rng.random(count)  # one draw per word: the whole word shares its fate
    at = np.flatnonzero((words >= 0) & chosen[np.maximum(words, 0)])
    labels[at] = ids[at]
    fate = action[words[at]]
    masked = at[fate < MASK_SHARE]
    replaced = at[(fate >= MASK_SHARE) & (fate < MASK_SHARE + RANDOM_SHARE)]
    inputs[masked] = mask_id
    inputs[replaced] = rng.choice(random_ids, size=len(replaced))
    return inputs, labels
