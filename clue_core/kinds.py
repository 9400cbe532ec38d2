"""The names of the example kinds, in a module of their own.

Hook modules need these names to build specs; importing them from here keeps
``clue-core list`` from creating the example dataclasses it never uses.
"""

CLASSIFICATION = "classification"
SPAN = "span"
MULTIPLE_CHOICE = "multiple_choice"
OPEN_QUESTION = "open_question"
KINDS = (CLASSIFICATION, SPAN, MULTIPLE_CHOICE, OPEN_QUESTION)
