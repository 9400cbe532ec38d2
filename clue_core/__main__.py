"""``python -m clue_core`` is the same as the ``clue-core`` console script."""

from clue_core.entry import main

if __name__ == "__main__":
    main()
