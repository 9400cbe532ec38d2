"""clue-models-llm: a clue-core plugin distribution."""

__version__ = "0.1.0"
