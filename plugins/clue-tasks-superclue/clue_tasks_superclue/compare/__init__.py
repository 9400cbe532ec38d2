"""``clue-core compare``: judged SuperCLUE runs against a reference run, written as ``comparison.json``.

The command lives in this plugin, not the kernel, because everything it knows (the dimensions,
the scoring method, win/tie/loss) is SuperCLUE's. ``comparison_file`` reads and checks the file it
writes; ``clue-report`` imports it to draw the SuperCLUE section.
"""
