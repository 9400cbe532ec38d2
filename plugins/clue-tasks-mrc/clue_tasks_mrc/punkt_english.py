"""The part of NLTK's English Punkt model that matters for lower-cased text.

Why this exists: the official CMRC2018 script calls ``nltk.word_tokenize``, which
splits sentences with the English ``punkt_tab`` model before word tokenization. That
model is NLTK *data*, normally fetched with ``nltk.download("punkt_tab")``; clue-core
must score offline, so we ship the few values the decision can depend on.

The metric lower-cases every string before tokenizing, so no token starts with an
upper-case letter. Reading Punkt's annotation passes (``nltk.tokenize.punkt``), the
model is then consulted in exactly three places:

* ``abbrev_types`` — a word before a period that is an abbreviation is no sentence end;
* ``collocations`` — (word before the period, word after) pairs that never split;
* ``ortho_context`` of a lower-case word after an initial or a number, only through the
  question "seen sentence-initially in lower case (flag ``BEG_LC``) and never in upper
  case?" — the four types below are the whole English model's answer set.

Sentence starters and the other orthographic flags are only read for capitalised
tokens. ``tests/mrc/test_mrc_word_tokens.py`` checks against the full model, where it
is installed, that these tables give the same tokens.

Values: NLTK Project ``punkt_tab`` data package, English model (trained by Tibor Kiss
and Jan Strunk), Apache License 2.0.
"""

from __future__ import annotations

ABBREV_TYPES = frozenset((
    '. . ', 'a.a', 'a.c', 'a.d', 'a.g', 'a.h', 'a.m', 'a.m.e', 'a.s', 'a.t', 'adm', 'ala', 'ariz', 'aug', 'ave',
    'b.f', 'b.v', 'bros', 'c', 'c.i.t', 'c.o.m.b', 'c.v', 'calif', 'chg', 'cie', 'co', 'col', 'colo', 'conn',
    'corp', 'cos', 'ct', 'd', 'd.c', 'd.h', 'd.w', 'dec', 'dr', 'e', 'e.f', 'e.h', 'e.l', 'e.m', 'f', 'f.g',
    'f.j', 'feb', 'fla', 'fri', 'ft', 'g', 'g.d', 'g.f', 'g.k', 'ga', 'gen', 'h', 'h.c', 'h.f', 'h.m', 'i.m.s',
    'ill', 'inc', 'j.b', 'j.c', 'j.j', 'j.k', 'j.p', 'j.r', 'jan', 'jr', 'k', 'kan', 'ky', 'l', 'l.a', 'l.f',
    'l.p', 'lt', 'ltd', 'm', 'm.b.a', 'm.d.c', 'm.j', 'maj', 'messrs', 'mg', 'mich', 'minn', 'mr', 'mrs', 'ms',
    'n', 'n.c', 'n.d', 'n.h', 'n.j', 'n.m', 'n.v', 'n.y', 'nev', 'nov', 'oct', 'ok', 'okla', 'ore', 'p',
    'p.a.m', 'p.m', 'pa', 'ph.d', 'prof', 'r', 'r.a', 'r.h', 'r.i', 'r.j', 'r.k', 'r.t', 'rep', 'reps', 's',
    's.a', 's.a.y', 's.c', 's.g', 's.p.a', 's.s', 'sen', 'sep', 'sept', 'sr', 'st', 'sw', 't', 't.j', 'tenn',
    'tues', 'u.k', 'u.n', 'u.s', 'u.s.a', 'u.s.s.r', 'v', 'va', 'vs', 'vt', 'w', 'w.c', 'w.r', 'w.va', 'w.w',
    'wash', 'wed', 'wis', 'yr',
))

COLLOCATIONS = frozenset((
    ('##number##', 'abreast'), ('##number##', 'aes'), ('##number##', 'business'), ('##number##', 'cbot'),
    ('##number##', 'colgate'), ('##number##', 'commodities'), ('##number##', 'cooper'), ('##number##',
    'corrections'), ('##number##', 'credit'), ('##number##', 'dividend'), ('##number##', 'financing'),
    ('##number##', 'genentech'), ('##number##', 'henley'), ('##number##', 'insider'), ('##number##',
    'international'), ('##number##', 'leisure'), ('##number##', 'letters'), ('##number##', 'notable'),
    ('##number##', 'pay-fone'), ('##number##', 'pegasus'), ('##number##', 'pepper'), ('##number##', 'review'),
    ('##number##', 'rj'), ('##number##', 'wedgestone'), ('##number##', 'who'), ('##number##', 'zimmer'), ('b',
    'edelman'), ('b', 'levine'), ('b', 'smith'), ('b', 'stewart'), ('b', 'wigton'), ('i', 'magnin'), ('i',
    'toussie'), ('j', 'aron'), ('j', 'fialka'), ('j', 'walter'), ('o', 'ludcke'),
))

#: Types whose orthographic context has BEG_LC set and no upper-case flag.
LOWER_CASE_SENTENCE_STARTERS = frozenset((
    'administrators', 'b-week', 'r-revised', 'z-holiday',
))
