"""clue-sweep: ``clue-core sweep`` (a grid of settings × seeds as runs) and ``clue-core bootstrap``."""
