"""clue-leaderboard: leaderboard submissions (``clue-core submit``) and scoring files (``clue-core evaluate``)."""
