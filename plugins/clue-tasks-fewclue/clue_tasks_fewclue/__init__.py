"""clue-tasks-fewclue: FewCLUE's nine few-shot tasks as a clue-core plugin distribution."""

__version__ = "0.1.0"
