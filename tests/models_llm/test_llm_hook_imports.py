"""Listing models imports only the backends' declarations: no run-time module of the plugin, no kernel run state.

``clue-core list`` builds every LLM model name from the ``BACKEND`` declared in each backend module
(:func:`clue_models_llm.backend.declared`), so those modules' tops must stay cheap: the run context,
the prompt rendering, the request dataclasses and the JSON module are imported where a run uses them.
"""

from __future__ import annotations

import subprocess
import sys

#: Modules a run needs and a listing must not pay for.
RUN_ONLY = ("clue_core.context", "clue_core.table", "clue_models_llm.prompting", "clue_models_llm.exchange",
            "clue_models_llm.learner", "clue_models_llm.factory", "clue_models_llm.generic", "json")


def test_the_hook_path_imports_only_declarations() -> None:
    code = ("import sys\n"
            "import clue_core.plugin\n"
            f"before = {{m for m in {RUN_ONLY!r} if m in sys.modules}}\n"
            "import clue_models_llm.hooks as h\n"
            "names = {s.name for s in h.clue_models()}\n"
            f"print(sorted(m for m in {RUN_ONLY!r} if m in sys.modules and m not in before), "
            "'llm-tiny' in names, 'openai' in names, file=sys.stderr)")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stderr.strip() == "[] True True", result.stderr


def test_the_exchange_names_are_still_exported_by_backend() -> None:
    from clue_models_llm import backend, exchange

    assert backend.Description is exchange.Description and backend.ScoreRequest is exchange.ScoreRequest
    assert backend.GenerateOptions is exchange.GenerateOptions
