"""The ``openprogram`` command: ``demo``, ``run`` and ``tools``.

Examples::

    openprogram demo                                   # the bundled nested program
    openprogram run examples.trip_planner:plan_trip Rome --model openai:gpt-4o-mini
    openprogram tools --policy toolset=files,deny=move_file --explain move_file

``--model`` takes a provider string (``openai:gpt-4o-mini``, ``local:…``) or
``module:attr`` naming a Provider or a no-argument factory of one (see
``openprogram.cli._model``); default ``$OPENPROGRAM_MODEL``, else the embedded
local model when installed.

Exit codes: 0 success; 1 the run failed (a provider error, a tool loop that
raised); 2 a usage or configuration problem (bad target, arguments, policy,
provider string); 130 interrupted. With ``--json`` an error is also printed
on stdout as ``{"error": {"type": ..., "message": ..., "exit_code": ...}}``.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from typing import Any

from openprogram.cli._model import choose_model, import_attribute, model_label
from openprogram.cli._run_cmd import bind_arguments, execute, parse_arguments
from openprogram.cli._tools_cmd import add_tools_arguments, tools_command
from openprogram.exceptions import ConfigurationError, OpenProgramError, UserError
from openprogram.runtime import MODEL_ENV_VAR, Runtime

__all__ = ["main"]

_USAGE_ERRORS = (UserError, ImportError)
"""Problems with what was asked (exit 2) rather than with the run itself (exit 1)."""


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the process exit code.

    Args:
        argv: The arguments after the program name (default ``sys.argv[1:]``).
    """
    args = _parser().parse_args(argv)
    try:
        code: int = args.handler(args)
    except KeyboardInterrupt:
        return _fail(args, "KeyboardInterrupt", "interrupted", 130)
    # Only the library's own errors and import failures are expected here; anything else is
    # a bug and keeps its traceback.
    except (OpenProgramError, ImportError) as exc:
        code = 2 if isinstance(exc, _USAGE_ERRORS) else 1
        return _fail(args, type(exc).__name__, str(exc), code)
    return code


def _fail(args: argparse.Namespace, kind: str, message: str, code: int) -> int:
    print(f"error: {message}", file=sys.stderr)
    if getattr(args, "json", False):
        print(json.dumps({"error": {"type": kind, "message": message, "exit_code": code}}))
    return code


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="openprogram", description="Nested agentic functions.")
    sub = parser.add_subparsers(required=True, metavar="COMMAND")

    demo = sub.add_parser("demo", help="run the bundled nested example, showing the run tree live")
    demo.add_argument("destination", nargs="?", default="Paris")
    _model_and_json(demo)
    demo.set_defaults(handler=_demo_command)

    run = sub.add_parser("run", help="run any agentic function: run module:function [ARGS]")
    run.add_argument("target", help="module:function, e.g. examples.trip_planner:plan_trip")
    run.add_argument(
        "arguments", nargs="*", help="positional values or key=value (JSON values accepted)"
    )
    _model_and_json(run)
    run.set_defaults(handler=_run_command)

    tools = sub.add_parser("tools", help="list what a policy offers, and why the rest is hidden")
    add_tools_arguments(tools)
    tools.set_defaults(handler=tools_command)
    return parser


def _model_and_json(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--model",
        help='provider string, e.g. "openai:gpt-4o-mini", or module:factory returning a '
        f"Provider (default: ${MODEL_ENV_VAR}, else the embedded local model)",
    )
    p.add_argument(
        "--json", action="store_true", help="events as JSON lines on stderr, result as JSON"
    )


def _demo_command(args: argparse.Namespace) -> int:
    from openprogram.cli._demo import plan_trip  # noqa: PLC0415 - only the demo needs it

    model = choose_model(args.model)
    if not args.json:
        print(f"openprogram demo — nested agentic functions on {model_label(model)}")
        print("plan_trip → research_destination → get_weather\n")
    return execute(model, args.json, lambda rt: plan_trip(args.destination, runtime=rt))


def _run_command(args: argparse.Namespace) -> int:
    target = import_attribute(args.target)
    if not callable(target):
        raise ConfigurationError(
            f"run {args.target}: that is a {type(target).__name__}, not a function"
        )
    positional, keywords = parse_arguments(args.arguments)
    bind_arguments(target, args.target, positional, keywords)
    model = choose_model(args.model)
    return execute(model, args.json, lambda rt: _call(target, positional, keywords, rt))


def _call(target: Any, positional: list[Any], keywords: dict[str, Any], rt: Runtime) -> Any:
    with rt:  # the target's agentic functions pick up this runtime as the current one
        return target(*positional, **keywords)
