"""The one bound of a seed, a leaf module: planning, config files, sweeps and pretraining check it.

It lives apart from :mod:`clue_core.config` because planning checks it and config builds planning's
request: one module holding both made an import circle.
"""

from __future__ import annotations

from clue_core.errors import ClueError

#: The largest seed every backend takes (numpy's legacy seeding, which accelerate's ``set_seed`` calls):
#: the one bound of a seed, for ``run`` (planning, so ``--dry-run`` too), a config file, sweeps and pretraining.
MAX_SEED = 2**32 - 1


def check_seed(seed: object) -> None:
    """Refuse a seed some backend refuses: accelerate and numpy raised a traceback from inside the
    learner for -5 or 2**32, torch for a 23-digit one, after the run's staging folder was made."""
    # only whole numbers here: a seed of another type is the record writer's refusal (it names the field)
    if isinstance(seed, int) and not isinstance(seed, bool) and not 0 <= seed <= MAX_SEED:
        raise ClueError(f"seed must be a whole number from 0 to {MAX_SEED} (--seed, or seed in the config file), "
                        f"got {seed}")
