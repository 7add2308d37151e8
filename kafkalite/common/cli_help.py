"""Click's command and group for kafkalite's command lines, ``kafkalite`` (kafkalite.cli) and its
benchmarks' group (kafkalite_bench.cli): a listing of subcommands shows each one's first sentence
whole, where click would cut it at the terminal's width."""

from __future__ import annotations

import click


def summary(command: click.Command) -> str:
    """A command's first sentence, whole."""
    text = " ".join((command.help or "").split())
    end = text.find(". ")
    return command.short_help or (text if end < 0 else text[:end + 1])


class Command(click.Command):
    def get_short_help_str(self, limit: int = 45) -> str:
        return summary(self)


class Group(click.Group):
    command_class = Command
    group_class = type  # subgroups are Group too

    def get_short_help_str(self, limit: int = 45) -> str:
        return summary(self)
