"""``list``, ``info`` and ``check`` are the built-in plugin's commands, not the kernel's.

The kernel ships its presentation of the registry the way it asks a third party to ship a command
(``clue_commands``): a kernel without the built-in plugin has none of the three, says which plugin
brings each, and still runs its own ``run``; with the plugin they are back, owned by it, and
``--help`` shows them as it showed the CLI's own commands (one line, no plugin named).
"""

from __future__ import annotations

import pytest

from clue_builtin import hooks as builtin
from clue_core.kernel import Kernel

THE_THREE = ("list", "info", "check")


def _bare() -> Kernel:
    return Kernel(entrypoints=False, strict=False, disabled=())


def test_a_kernel_without_the_builtin_plugin_has_no_list_info_or_check(run_cli) -> None:
    kernel = _bare()
    assert not set(THE_THREE) & set(kernel.commands)
    helped = run_cli("--help", kernel=kernel)
    assert helped.exit_code == 0
    listed = [line.split()[0] for line in helped.output.split("Commands:", 1)[1].splitlines() if line.strip()]
    assert listed == ["run"]
    for name in THE_THREE:
        result = run_cli(name, kernel=kernel)
        assert result.exit_code == 2
        assert result.output == (f"error: 'clue-core {name}' comes with the builtin plugin, which is not installed: "
                                 "pip install .\n")


def test_disabling_the_builtin_plugin_says_so(run_cli) -> None:
    kernel = Kernel(entrypoints=False, strict=False, disabled={"builtin"})
    kernel.register(builtin, "builtin", distribution="clue-core")
    result = run_cli("list", "tasks", kernel=kernel)
    assert result.exit_code == 2
    assert result.output == ("error: 'clue-core list' comes with the builtin plugin, which CLUE_DISABLE_PLUGINS "
                             "turns off\n")


def test_with_the_builtin_plugin_they_are_its_commands(run_cli) -> None:
    kernel = _bare()
    kernel.register(builtin, "builtin", distribution="clue-core")
    assert {name: kernel.owner[("commands", name)] for name in THE_THREE} == dict.fromkeys(THE_THREE, "builtin")
    helped = run_cli("--help", kernel=kernel).output
    assert "(plugin builtin)" not in helped
    listed = run_cli("list", "commands", kernel=kernel)
    assert listed.exit_code == 0
    rows = [line.split()[:2] for line in listed.output.splitlines()[2:]]
    assert rows == [["check", "builtin"], ["info", "builtin"], ["list", "builtin"]]
    assert run_cli("list", kernel=kernel).output.splitlines()[2].split()[:4] == ["builtin", "clue-core", "-", "ok"]


@pytest.mark.parametrize("name", THE_THREE)
def test_a_third_party_cannot_take_their_names_even_with_the_builtin_plugin_off(name: str) -> None:
    from clue_core.plugin import CommandSpec, hookimpl

    class Clasher:
        @hookimpl
        def clue_commands(self) -> list[CommandSpec]:
            return [CommandSpec(name, "Mine now.", "clue_builtin.commands:check")]

    kernel = Kernel(entrypoints=False, strict=False, disabled={"builtin"})
    kernel.register(Clasher(), "clasher")
    row = next(p for p in kernel.plugins if p.name == "clasher")
    assert row.status == "error" and f"command {name!r} is a built-in command of clue-core" in row.error
    assert name not in kernel.commands
