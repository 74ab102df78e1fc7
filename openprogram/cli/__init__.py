"""The ``openprogram`` command (``demo``, ``run``, ``tools``, ``chat``, ``mcp``): docs/cli.md.

Examples::

    openprogram demo                                   # the bundled nested program
    openprogram run examples.trip_planner:plan_trip Rome --model openai:gpt-4o-mini
    openprogram tools --registry examples.file_organizer:TOOLS --explain move_file
    openprogram --version

The command's modules: ``_main`` (``main``: outcome and exit code),
``_parser`` (the grammar), ``_subcommands`` (the table of commands, one
``Command`` each: ``_run_cmd`` for ``demo`` and ``run``, ``_tools_cmd`` for
``tools``), ``_errors`` (exit codes), ``_output`` (the one-JSON-object rule),
``_json`` (results as JSON).
"""

from __future__ import annotations

from openprogram.cli._main import main

__all__ = ["main"]
