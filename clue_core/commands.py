"""Plugin commands: a :class:`~clue_core.specs.CommandSpec` becomes a click command when it runs.

The spec's ``command`` reference is imported here, at the moment the command is invoked, so
``clue-core --help`` and ``clue-core list`` import no plugin command code. A command that
fails to import, or names something that is not a click command, is one line naming its
plugin; a command whose plugin is not installed (or failed to load) says what to install.
"""

from __future__ import annotations

import click

from clue_core.errors import ClueError, PluginError
from clue_core.kernel import BUILTIN_PLUGIN, Kernel
from clue_core.specs import CommandSpec, resolve


def load_command(kernel: Kernel, spec: CommandSpec) -> click.Command:
    """Import the click command ``spec`` names; failures name the plugin that registered it."""
    owner = kernel.owner.get(("commands", spec.name), "?")
    try:
        command = resolve(spec.command)
    except (Exception, SystemExit) as exc:  # a module that calls sys.exit() on import is broken too
        if kernel.strict:
            raise
        raise PluginError(f"plugin {owner}: command {spec.name!r} could not be loaded from {spec.command} "
                          f"({type(exc).__name__}: {exc})") from exc
    if not isinstance(command, click.Command):
        raise PluginError(f"plugin {owner}: {spec.command} is a {type(command).__name__}, not a click command")
    return command


def missing_command(kernel: Kernel, name: str, home: str | None) -> click.Command | None:
    """A stand-in for a command whose plugin is absent, or ``None`` when no plugin is known for it.

    Running it prints one line saying which distribution to install (or why the installed one
    did not load), instead of click's bare "No such command".
    """
    if home is None:
        return None
    row = next((p for p in kernel.plugins if home in {p.name, p.distribution}), None)
    if row is not None and row.status == "error":
        why = f"the {home} plugin, which failed to load: {row.error}"
    elif row is not None and row.status == "disabled":
        why = f"the {home} plugin, which CLUE_DISABLE_PLUGINS turns off"
    else:  # the built-in plugin ships in clue-core's own distribution: an install without it is broken
        where = "." if home == BUILTIN_PLUGIN else f"./plugins/{home}"
        why = f"the {home} plugin, which is not installed: pip install {where}"
    message = f"'clue-core {name}' comes with {why}"

    @click.command(name=name, context_settings={"ignore_unknown_options": True, "allow_extra_args": True},
                   add_help_option=False, help=f"(not installed: {home})")
    def unavailable() -> None:
        raise ClueError(message)

    return unavailable
