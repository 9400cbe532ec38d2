"""``clue-core compare``: SuperCLUE runs (judged or pass/fail) rated and set against a reference: comparison.json.

The command lives in this plugin, not the kernel, because everything it knows (the dimensions,
the scoring method, win/tie/loss) is SuperCLUE's, and it shares those with the task through
:mod:`clue_tasks_superclue.dimensions`, :mod:`~clue_tasks_superclue.aggregate` and
:mod:`~clue_tasks_superclue.win_tie_loss` instead of restating them.

Modules: :mod:`cli` is the click command (imported only when ``compare`` runs), :mod:`command`
ties the steps together, :mod:`runs` reads run folders strictly (judged and verifiable records), :mod:`scores` tallies
scores, win/tie/loss and maturity, :mod:`ratings` fits Bradley–Terry with bootstrap intervals,
:mod:`elo` plays online Elo and counts SuperCLUE points, :mod:`standings` puts the ratings in
the document, :mod:`build` assembles the document, :mod:`judges` measures a panel's judges against
each other, :mod:`human` correlates with a human ranking, :mod:`sheet` exports and reads back the
judge-agreement sheet (and measures the judge against people), :mod:`tables`
reads the CSV files people hand in, and :mod:`comparison_file` reads and checks the written
file (:mod:`clue_tasks_superclue.report_section` reads it to build the SuperCLUE report section).
"""
