"""clue-tasks-kgclue: KgCLUE, questions answered by a knowledge-base triple."""
