"""clue-tasks-superclue: SuperCLUE-style open-ended evaluation on the clue-core kernel."""

__version__ = "0.1.0"
