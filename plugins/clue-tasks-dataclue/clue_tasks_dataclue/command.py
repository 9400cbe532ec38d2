"""``clue-core dataclue``: the DataCLUE plugin's command group (``audit``)."""

from __future__ import annotations

import click


@click.group()
def dataclue() -> None:
    """DataCLUE's data-centric tools."""
