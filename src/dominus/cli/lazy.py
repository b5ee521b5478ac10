"""Commands imported when they run: `dominus queue stats` imports the queue commands, not the
pipeline, the API server and every handler behind the other commands.

The top-level group knows each command by name, module and one line of help. The command's
module is imported the first time the command is looked up (to run it, to show its own
`--help`, or by a test walking the tree); `dominus --help` lists the commands from their lines
of help alone. tests/integration/test_cli_lazy.py holds those lines to the commands' own help.
"""

from __future__ import annotations

import copy
import importlib
from collections.abc import Callable, Iterator, MutableMapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import typer
from typer._click import Command, Context, HelpFormatter  # Typer's own Click, vendored
from typer.core import TyperCommand, TyperGroup


@dataclass(frozen=True)
class LazyCommand:
    """`dominus NAME`: the Typer app (a group) or the function (a command) `attribute` of
    `module`, listed in `dominus --help` as `help` (the first paragraph of its own help)."""

    name: str
    module: str
    attribute: str
    help: str

    def load(self) -> Command:
        target = getattr(importlib.import_module(self.module), self.attribute)
        # A throwaway app builds the command exactly as `add_typer` / `command` on the
        # top-level app would have (same defaults for markup and exceptions).
        holder = typer.Typer()
        if isinstance(target, typer.Typer):
            holder.add_typer(target, name=self.name)
        else:
            holder.command(self.name)(target)
        return typer.main.get_group(holder).commands[self.name]

    def listing(self) -> Command:
        """A stand-in that shows in the parent's help as the command would."""
        return TyperCommand(name=self.name, help=self.help)


class LazyCommands(MutableMapping[str, Command]):
    """A group's commands by name, each imported on first access; iteration (the names, in
    order) imports nothing."""

    def __init__(
        self, lazy: Sequence[LazyCommand], prepare: Callable[[str, Command], None]
    ) -> None:
        self.lazy = {command.name: command for command in lazy}
        self.loaded: dict[str, Command] = {}
        self.prepare = prepare

    def __getitem__(self, name: str) -> Command:
        if name not in self.loaded:
            command = self.lazy[name].load()  # KeyError for an unknown name
            self.prepare(name, command)
            self.loaded[name] = command
        return self.loaded[name]

    def __setitem__(self, name: str, command: Command) -> None:
        self.loaded[name] = command

    def __delitem__(self, name: str) -> None:
        self.lazy.pop(name, None)
        self.loaded.pop(name, None)

    def __iter__(self) -> Iterator[str]:
        yield from self.lazy
        yield from (name for name in self.loaded if name not in self.lazy)

    def __len__(self) -> int:
        return len(self.lazy.keys() | self.loaded.keys())

    def listings(self) -> dict[str, Command]:
        """Every command as `--help` lists it: the loaded ones themselves, the others by their
        stand-ins."""
        listed = {}
        for name in self:
            if name in self.loaded:
                listed[name] = self.loaded[name]
            else:
                listed[name] = self.lazy[name].listing()
                self.prepare(name, listed[name])
        return listed


class LazyGroup(TyperGroup):
    """A Typer group whose commands are the subclass's `lazy` ones (see the module docstring).
    Use as `typer.Typer(cls=...)`."""

    lazy: ClassVar[Sequence[LazyCommand]] = ()

    def __init__(self, **attrs: Any) -> None:
        super().__init__(**attrs)
        commands = LazyCommands(self.lazy, self.prepare)
        commands.loaded.update(self.commands)  # any registered the usual way
        self.commands = commands
        self.prepare("", self)

    def prepare(self, path: str, command: Command) -> None:
        """Called with each command once it is loaded (and with each stand-in listed, and the
        group itself with path ""): a subclass's chance to adjust it."""

    def format_help(self, ctx: Context, formatter: HelpFormatter) -> None:
        listing = copy.copy(self)
        listing.commands = self._lazy_commands().listings()
        TyperGroup.format_help(listing, ctx, formatter)

    def _lazy_commands(self) -> LazyCommands:
        assert isinstance(self.commands, LazyCommands)
        return self.commands
