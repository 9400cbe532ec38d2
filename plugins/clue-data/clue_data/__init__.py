"""clue-data: fetching a task's official files into the verified cache, and ``clue-core download``."""
