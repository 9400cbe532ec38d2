"""Names people choose reach the terminal escaped: an OSC in a model name (``ESC ] 0 ; pwned BEL``) set the
terminal's title when the results table or a warning printed it raw."""

from __future__ import annotations

from clue_core.plugin import format_table, printable

OSC = "\x1b]0;pwned\x07"


def test_printable_shows_each_control_character_as_its_escape() -> None:
    assert printable(f"m{OSC}") == "m\\x1b]0;pwned\\x07"
    assert printable("a\rb\tc\x00d\x7f\x9b") == "a\\x0db\\x09c\\x00d\\x7f\\x9b"
    assert printable("abc\u202edef") == "abc\\u202edef"  # a bidi override would reorder the rest of the line
    assert printable("模型 ok") == "模型 ok"  # text without controls comes back unchanged
    assert printable(printable(OSC)) == printable(OSC)  # escaping twice is escaping once
    assert printable("a\nb") == "a\\x0ab" and printable("a\nb\x1b", lines=True) == "a\nb\\x1b"
    assert printable(3.5) == "3.5"


def test_a_table_escapes_its_cells_and_pads_the_shown_text() -> None:
    table = format_table([["model", "score"], [f"m{OSC}", "1.0"], ["模型", "2.0"]])
    assert "\x1b" not in table and "\x07" not in table
    lines = table.split("\n")
    assert lines[2] == "m\\x1b]0;pwned\\x07  1.0"
    assert lines[3] == "模型" + " " * (len("m\\x1b]0;pwned\\x07") - 4) + "  2.0"
