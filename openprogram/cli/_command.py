"""One subcommand of ``openprogram``: its word, its arguments, and what it does.

A command lives in a module of its own (``_run_cmd.py``, ``_tools_cmd.py`` …)
that defines a ``Command`` value; ``_subcommands.COMMANDS`` lists them, and
that list is all the parser and ``main`` know. A command's ``run`` prints what
a person reads (when ``args.json`` is false) and returns the object ``--json``
prints; it reports failures by raising (``describe_failure`` in ``_errors``
gives each kind its exit code). The parser adds ``--json`` itself to every
command whose ``json_output`` is true.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

__all__ = ["Command"]


@dataclass(frozen=True, slots=True, kw_only=True)
class Command:
    """A subcommand: ``openprogram <name> ...``."""

    name: str
    """The word after ``openprogram``, e.g. ``"run"``."""
    help: str
    """One line for the command list of ``openprogram --help``."""
    add_arguments: Callable[[argparse.ArgumentParser], None]
    """Declares the command's positionals and options on its sub-parser (not ``--json``)."""
    run: Callable[[argparse.Namespace], Mapping[str, Any] | None]
    """Does the work; returns what ``--json`` prints (``None`` prints ``{}``)."""
    description: str | None = None
    """A longer text for ``openprogram <name> --help`` (default: ``help``)."""
    json_output: bool = True
    """Whether the command takes ``--json``; false for one that owns stdout (a stdio server)."""
