"""The names of the three example kinds, in a module of their own.

Hook modules need these names to build specs; importing them from here keeps
``clue-core list`` from creating the example dataclasses it never uses.
"""

CLASSIFICATION = "classification"
SPAN = "span"
MULTIPLE_CHOICE = "multiple_choice"
KINDS = (CLASSIFICATION, SPAN, MULTIPLE_CHOICE)
