"""Tokenize non-Chinese runs exactly as the official CMRC2018 script's ``nltk.word_tokenize``.

Why not simply call ``nltk.word_tokenize``: since NLTK 3.9 it first splits sentences
with the English ``punkt_tab`` model, a data package that must be downloaded, and
clue-core scores offline. ``word_tokenize(..., preserve_line=True)`` needs no data but
is *not* equivalent: the Treebank tokenizer splits a period off only at the end of the
string, so ``"a. b"`` gives ``["a.", "b"]`` where the official call, which ends a
sentence after ``a.``, gives ``["a", ".", "b"]``.

So we run the same two NLTK steps ``word_tokenize`` runs — ``PunktSentenceTokenizer``
then ``NLTKWordTokenizer`` on each sentence — and give Punkt the parameters it reads for
lower-cased text (the metric lower-cases before tokenizing), shipped in
:mod:`clue_tasks_mrc.punkt_english`. ``tests/mrc/test_mrc_word_tokens.py`` shows the
result equal to the official call on recorded outputs and, where ``punkt_tab`` is
installed, live on a broad and a random set of inputs.

Runs of plain ASCII letters or digits are by far the most common input (years,
numbers, English names); they are one token unless they are one of the Treebank
tokenizer's split words (``cannot``, ``gonna`` …), so they skip NLTK entirely.
"""

from __future__ import annotations

import functools
import re
from typing import Any

from clue_tasks_mrc import punkt_english

# Words the Treebank tokenizer splits although they have no punctuation (its CONTRACTIONS2).
_SPLIT_WORDS = frozenset({"cannot", "gimme", "gonna", "gotta", "lemme", "wanna"})
_PLAIN_WORD = re.compile(r"[a-z]+|[0-9]+")


@functools.lru_cache(maxsize=1)
def _tokenizers() -> tuple[Any, Any]:
    """Build the two NLTK tokenizers once (importing NLTK takes about a second)."""
    from collections import defaultdict

    from nltk.tokenize.destructive import NLTKWordTokenizer
    from nltk.tokenize.punkt import PunktParameters, PunktSentenceTokenizer

    params = PunktParameters()
    params.abbrev_types = set(punkt_english.ABBREV_TYPES)
    params.collocations = set(punkt_english.COLLOCATIONS)
    # 16 = BEG_LC: "seen in lower case at a sentence start", with no upper-case flag.
    params.ortho_context = defaultdict(int, dict.fromkeys(punkt_english.LOWER_CASE_SENTENCE_STARTERS, 16))
    sentences = PunktSentenceTokenizer()
    sentences._params = params
    return sentences, NLTKWordTokenizer()


@functools.lru_cache(maxsize=65536)
def _word_tokenize_cached(text: str) -> tuple[str, ...]:
    sentences, words = _tokenizers()
    return tuple(token for sentence in sentences.tokenize(text) for token in words.tokenize(sentence))


def word_tokenize(text: str) -> tuple[str, ...]:
    """Tokens of a lower-cased non-Chinese run, as ``nltk.word_tokenize(text)`` gives them.

    Only lower-cased text is supported (the Punkt parameters shipped cover no capitalised
    token); the CMRC2018 metric never passes anything else.
    """
    if _PLAIN_WORD.fullmatch(text) and text not in _SPLIT_WORDS:
        return (text,)
    return _word_tokenize_cached(text)
