"""A model built inside a run (a judge, each judge of a panel) refuses its settings by the keys the user writes.

A model's factory names its own settings bare (``--set base_url=…``), as they are written for
the model a run answers with; built as ``judge.1`` its ``base_url`` is ``--set judge.1.base_url=…``,
and the bare key the message suggested would set a different model's setting or none. So the
kernel, which knows the namespace, rewrites the keys of the model's declared settings in its
refusal and says which model refused (``judge.1 (openai:m): … --set judge.1.base_url=…``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from clue_core.errors import ClueError, Interrupted
from clue_core.specs import Setting


def in_namespace(exc: ClueError, namespace: str, model: str, declared: Iterable[Setting]) -> ClueError:
    """``exc`` with each declared setting it names as ``--set NAME=`` or ``setting 'NAME'`` under ``namespace``.

    Only the model's own declared names are rewritten, and only in those two forms, so the rest of
    the message (a path, a value) is left as it was. An interruption is no refusal: it passes unchanged.
    """
    if isinstance(exc, Interrupted):
        return exc
    names = sorted({setting.name for setting in declared}, key=len, reverse=True)
    text = str(exc)
    if names:
        keys = "|".join(re.escape(name) for name in names)
        text = re.sub(rf"(--set |setting ')({keys})(?=[=' ]|$)", rf"\g<1>{namespace}.\g<2>", text)
    refused = ClueError(f"{namespace} ({model}): {text}")
    refused.exit_code = exc.exit_code
    return refused
