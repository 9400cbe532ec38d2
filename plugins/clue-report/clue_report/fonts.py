"""Which font the charts use, so that Chinese labels never turn into boxes.

With a CJK font installed (Debian: ``fonts-wqy-microhei`` or ``fonts-noto-cjk``) the
charts show the Chinese names of labels, dimensions and axes. Without one, every label
falls back to its English name (task names, label codes, a dimension's ``name_en``):
matplotlib would otherwise draw a box per missing glyph. ``CLUE_REPORT_FONT`` overrides
the search: ``none`` forces the English path, a family name or a font file picks a font,
``auto`` (the default) searches.

matplotlib's font cache may predate a font installed later, so the font files on the
system are searched too (by file name, then by checking that the font has the glyphs).
"""

from __future__ import annotations

import functools
import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

FONT_ENV = "CLUE_REPORT_FONT"

Label = str | tuple[str, str | None]
"""A text drawn in a chart, or ``(text, english)``: the English name stands in without a CJK font.

Defined here, next to :meth:`FontChoice.label` that resolves one, so that both
:mod:`clue_report.kit` (which re-exports it) and :mod:`clue_report.drawers` can name it
without importing each other (the kit imports the drawers when it draws)."""

#: Families known to cover simplified Chinese, tried first, in this order.
CJK_FAMILIES = (
    "WenQuanYi Micro Hei", "WenQuanYi Zen Hei", "Noto Sans CJK SC", "Noto Sans CJK JP", "Noto Sans SC",
    "Source Han Sans SC", "Source Han Sans CN", "Droid Sans Fallback", "AR PL UMing CN", "AR PL UKai CN",
    "SimHei", "Microsoft YaHei", "PingFang SC", "Heiti SC",
)
#: Font file names that suggest CJK coverage (checked against the glyphs before use).
CJK_FILE_HINTS = ("wqy", "cjk", "droidsansfallback", "uming", "ukai", "sourcehan", "simhei", "msyh", "pingfang")
#: Characters a CJK font must have to be used (common in the report's Chinese labels).
PROBE = "中文能力基础应用计算逻辑"
BASE_FAMILY = "DejaVu Sans"


@functools.cache
def _charmap(path: str) -> frozenset[int]:
    from matplotlib.ft2font import FT2Font

    try:
        return frozenset(FT2Font(path).get_charmap())
    except (OSError, RuntimeError, ValueError):
        return frozenset()


def _covers(path: str, text: str = PROBE) -> bool:
    charmap = _charmap(path)
    return all(ord(char) in charmap for char in text)


@dataclass(frozen=True)
class FontChoice:
    """The CJK font the charts use (None: English labels only) and the characters drawable."""

    family: str | None
    path: str | None
    reason: str
    drawable: frozenset[int] = field(default_factory=frozenset)

    @property
    def cjk(self) -> bool:
        return self.family is not None

    def rc(self) -> dict[str, object]:
        """matplotlib settings for charts drawn with this choice (the CJK font, then DejaVu for the rest)."""
        families = [self.family, BASE_FAMILY] if self.family else [BASE_FAMILY]
        return {"font.family": "sans-serif", "font.sans-serif": families, "axes.unicode_minus": False}

    def can_draw(self, text: str) -> bool:
        return all(ord(char) in self.drawable or char in "\n\t" for char in text)

    def label(self, text: str, english: str | None = None) -> str:
        """``text`` if every character can be drawn, else its English name, else ``?`` per missing glyph."""
        if self.can_draw(text):
            return text
        if english is not None and self.can_draw(english):
            return english
        return "".join(char if self.can_draw(char) else "?" for char in (english or text))


def _register(path: str) -> str:
    from matplotlib import font_manager
    from matplotlib.ft2font import FT2Font

    font_manager.fontManager.addfont(path)
    return str(FT2Font(path).family_name)


def _known_files() -> Iterable[tuple[str, str]]:
    """(family, file) of the fonts matplotlib knows, CJK families first."""
    from matplotlib import font_manager

    entries = font_manager.fontManager.ttflist
    rank = {name: i for i, name in enumerate(CJK_FAMILIES)}
    for entry in sorted((e for e in entries if e.name in rank), key=lambda e: rank[e.name]):
        yield entry.name, entry.fname


def _system_files() -> list[str]:
    from matplotlib import font_manager

    files = font_manager.findSystemFonts(fontext="ttf")
    hinted = [f for f in files if any(h in Path(f).name.lower().replace("-", "") for h in CJK_FILE_HINTS)]
    return sorted(hinted)


def _base_drawable() -> frozenset[int]:
    from matplotlib import font_manager

    return _charmap(font_manager.findfont(BASE_FAMILY, fallback_to_default=True))


def choose_font(setting: str | None = None) -> FontChoice:
    """The font for this report: ``setting`` or ``$CLUE_REPORT_FONT`` (``auto``, ``none``, a family, a file)."""
    wanted = (setting if setting is not None else os.environ.get(FONT_ENV, "auto")).strip() or "auto"
    base = _base_drawable()
    if wanted.lower() == "none":
        return FontChoice(None, None, f"{FONT_ENV}=none: English labels", base)
    if wanted.lower() != "auto":
        if Path(wanted).is_file():
            if _covers(wanted):
                return FontChoice(_register(wanted), wanted, f"{FONT_ENV}={wanted}", base | _charmap(wanted))
            return FontChoice(None, None, f"{wanted} lacks Chinese glyphs: English labels", base)
        for family, path in _all_known():
            if family == wanted and _covers(path):
                return FontChoice(family, path, f"{FONT_ENV}={wanted}", base | _charmap(path))
        return FontChoice(None, None, f"font {wanted!r} not found or without Chinese glyphs: English labels", base)
    for family, path in _known_files():
        if _covers(path):
            return FontChoice(family, path, "found", base | _charmap(path))
    for path in _system_files():
        if _covers(path):
            return FontChoice(_register(path), path, "found", base | _charmap(path))
    return FontChoice(None, None, "no CJK font installed (e.g. apt-get install fonts-wqy-microhei): "
                                  "English labels", base)


def _all_known() -> Iterable[tuple[str, str]]:
    from matplotlib import font_manager

    for entry in font_manager.fontManager.ttflist:
        yield entry.name, entry.fname
    for path in _system_files():
        yield _register(path), path
