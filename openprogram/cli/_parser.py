"""The command line's grammar: one sub-parser per ``Command``, and argparse never exits.

argparse's own exits (``--help``, ``--version``, errors) become exceptions
here, so ``main`` decides what reaches stdout: ``Shown`` for help and version
(exit 0; ``{"help": ...}`` or ``{"version": ...}`` with ``--json``),
``UsageError`` for a bad command line (exit 2, with the usage line). Option
abbreviations are off: ``--js`` is an error, not ``--json``.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from typing import Any, NoReturn

from openprogram import __version__
from openprogram.cli import _subcommands
from openprogram.cli._command import Command
from openprogram.cli._errors import UsageError
from openprogram.cli._suggest import did_you_mean

__all__ = ["Shown", "build_parser", "parse_command_line", "wants_json"]

_JSON_HELP = (
    "print exactly one JSON object on stdout: the result, or {'error': {...}} whatever "
    "goes wrong; everything else printed goes to stderr"
)

_EPILOG = """\
examples:
  openprogram demo                       the bundled nested program, its run tree live
  openprogram run examples.trip_planner:plan_trip Rome --model openai:gpt-4o-mini
  openprogram tools --registry examples.file_organizer:TOOLS --explain move_file
  openprogram COMMAND --help             every option of one command

exit codes: 0 success; 1 the run failed (your code raised, or a provider call
failed); 2 a usage or configuration problem; 130 interrupted.
The command line is documented in docs/cli.md."""


class Shown(Exception):
    """``--help`` or ``--version``: text for a person, an object for ``--json`` (exit 0)."""

    def __init__(self, text: str, obj: dict[str, Any]) -> None:
        super().__init__(text)
        self.text = text
        """What a terminal shows."""
        self.obj = obj
        """What ``--json`` prints."""


class _ShowHelp(argparse.Action):
    def __init__(self, option_strings: Sequence[str], dest: str, **kwargs: Any) -> None:
        super().__init__(option_strings, dest=argparse.SUPPRESS, nargs=0, **kwargs)

    def __call__(self, parser: argparse.ArgumentParser, *_: Any) -> NoReturn:
        text = parser.format_help()
        raise Shown(text, {"help": text})


class _ShowVersion(argparse.Action):
    def __init__(self, option_strings: Sequence[str], dest: str, **kwargs: Any) -> None:
        super().__init__(option_strings, dest=argparse.SUPPRESS, nargs=0, **kwargs)

    def __call__(self, parser: argparse.ArgumentParser, *_: Any) -> NoReturn:
        raise Shown(f"openprogram {__version__}\n", {"version": __version__})


class _Parser(argparse.ArgumentParser):
    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**{**kwargs, "add_help": False, "allow_abbrev": False})
        self.add_argument("-h", "--help", action=_ShowHelp, help="show this help and exit")

    def error(self, message: str) -> NoReturn:
        # Raised rather than exiting, so that --json can still print its one error object.
        raise UsageError(
            f"{self.prog}: {message} (see {self.prog} --help)", usage=self.format_usage()
        )


def build_parser(commands: Sequence[Command] | None = None) -> argparse.ArgumentParser:
    """The parser of ``openprogram``: ``--version``, ``--help``, and one sub-parser per command.

    Args:
        commands: The commands (default ``_subcommands.COMMANDS``, read at each call).
    """
    commands = _subcommands.COMMANDS if commands is None else commands
    parser = _Parser(
        prog="openprogram",
        description="Run nested agentic functions, and see which tools a policy offers.",
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action=_ShowVersion, help="print the version and exit")
    parser.add_argument("--json", dest="json_before_command", action="store_true", help=_JSON_HELP)
    sub = parser.add_subparsers(title="commands", metavar="COMMAND")
    for command in commands:
        p = sub.add_parser(
            command.name, help=command.help, description=command.description or command.help
        )
        command.add_arguments(p)
        if command.json_output:
            p.add_argument("--json", action="store_true", help=_JSON_HELP)
        p.set_defaults(command_to_run=command, command_parser=p)
    return parser


def parse_command_line(words: Sequence[str]) -> tuple[Command, argparse.Namespace]:
    """The command to run and its arguments (``args.json`` says whether ``--json`` was given).

    Raises:
        Shown: ``--help`` or ``--version`` was asked for.
        UsageError: No command, an unknown one, or arguments it does not take.
    """
    commands = _subcommands.COMMANDS
    parser = build_parser(commands)
    names = [c.name for c in commands]
    word = next((w for w in _before_dashes(words) if not w.startswith("-")), None)
    if word is not None and word not in names:
        raise UsageError(
            f"openprogram: unknown command {word!r}{did_you_mean(word, names)} "
            f"(commands: {', '.join(names)}; see openprogram --help)",
            usage=parser.format_usage(),
        )
    args, extra = parser.parse_known_args(words)
    if extra:  # said by the command's own parser, so the usage line is the command's
        getattr(args, "command_parser", parser).error(f"unrecognized arguments: {' '.join(extra)}")
    command: Command | None = getattr(args, "command_to_run", None)
    if command is None:
        raise UsageError("openprogram: no command given", usage=parser.format_help())
    if args.json_before_command and not command.json_output:
        raise UsageError(f"openprogram {command.name} does not take --json")
    args.json = bool(getattr(args, "json", False) or args.json_before_command)
    return command, args


def wants_json(words: Sequence[str]) -> bool:
    """Whether ``--json`` is on the command line (known before parsing, for parse errors)."""
    return "--json" in _before_dashes(words)


def _before_dashes(words: Sequence[str]) -> list[str]:
    words = list(words)
    return words[: words.index("--")] if "--" in words else words
