"""The subcommands of ``openprogram``, in the order ``openprogram --help`` lists them.

To add one: write ``openprogram/cli/_<name>_cmd.py`` defining a ``Command``
(see ``_command``), import it here and add it to ``COMMANDS`` (one line each).
"""

from __future__ import annotations

from openprogram.cli import _chat_cmd, _mcp_cmd, _run_cmd, _runs_cmd, _tools_cmd, _worker_cmd
from openprogram.cli._command import Command

__all__ = ["COMMANDS"]

COMMANDS: tuple[Command, ...] = (
    _run_cmd.DEMO,
    _run_cmd.RUN,
    _tools_cmd.TOOLS,
    _chat_cmd.CHAT,
    _mcp_cmd.MCP,
    _runs_cmd.RUNS,
    _runs_cmd.RESUME,
    _worker_cmd.WORKER,
)
"""Every subcommand; the parser and ``main`` know nothing else."""
