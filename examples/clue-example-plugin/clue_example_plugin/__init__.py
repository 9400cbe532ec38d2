"""An example third-party task plugin for clue-core (see docs/writing-a-plugin.md)."""

__version__ = "0.1.0"
