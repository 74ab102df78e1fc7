"""The ``openprogram`` command: ``demo``, ``run`` and ``tools``.

Examples::

    openprogram demo                                   # the bundled nested program
    openprogram run examples.trip_planner:plan_trip Rome --model openai:gpt-4o-mini
    openprogram tools --registry examples.file_organizer:TOOLS --explain move_file
    openprogram --version

``--model`` takes a provider string (``openai:gpt-4o-mini``, ``local:…``) or
``module:attr`` naming a Provider or a no-argument factory of one (see
``openprogram.cli._model``); default ``$OPENPROGRAM_MODEL``, else the embedded
local model when installed.

Exit codes: 0 success; 1 the run failed: the user's code raised (its
traceback is printed; an ``ImportError`` inside the user's module counts) or
the run itself failed (a provider error); 2 a usage or configuration problem
(bad target, a module that does not exist, arguments the function's schema
rejects, a policy, a provider string); 130 interrupted. With ``--json``
stdout holds exactly one JSON object whatever happens: the command's result,
or ``{"error": {"type": ..., "message": ..., "exit_code": ...}}`` (plus
``"traceback"`` when the user's code raised).
"""

from __future__ import annotations

import argparse
import asyncio
import inspect
import json
import sys
from collections.abc import Callable, Sequence
from typing import Any, NoReturn

from openprogram import __version__
from openprogram.cli._args import bind_arguments, parse_arguments
from openprogram.cli._model import choose_model, import_attribute, model_label
from openprogram.cli._output import UserCodeError, print_error, stdout_to_stderr
from openprogram.cli._run_cmd import execute, jsonable
from openprogram.cli._tools_cmd import add_tools_arguments, tools_command
from openprogram.exceptions import ConfigurationError, OpenProgramError, UserError
from openprogram.providers.local import LOCAL_MODEL, LOCAL_MODELS
from openprogram.runtime import MODEL_ENV_VAR, Runtime

__all__ = ["main"]

_EMBEDDED_MODELS = ", ".join(
    f"local:{model} "
    + (
        "(the default)"
        if model == LOCAL_MODEL
        else f"(extra {spec.extra}, requantized: faster)"
        if spec.faster is not None
        else f"(extra {spec.extra})"
    )
    for model, spec in LOCAL_MODELS.items()
)


class _UsageError(Exception):
    """argparse found a bad command line (exit 2)."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        # Raised rather than exiting, so that --json can still print its one error object.
        raise _UsageError(f"{self.prog}: {message}")


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the process exit code.

    Args:
        argv: The arguments after the program name (default ``sys.argv[1:]``).
    """
    words = list(sys.argv[1:] if argv is None else argv)
    as_json = "--json" in words  # known before parsing, so a parse error is JSON too
    result: Any = None
    try:
        with stdout_to_stderr(as_json):
            args = _parser().parse_args(words)
            result = args.handler(args)
    except _UsageError as exc:
        return print_error("UsageError", str(exc), 2, as_json=as_json)
    except UserCodeError as exc:
        cause = exc.error
        message = f"{exc.where}: {type(cause).__name__}: {cause}"
        return print_error(type(cause).__name__, message, 1, as_json=as_json, error=cause)
    except UserError as exc:  # bad arguments, missing modules, policies, configuration
        return print_error(type(exc).__name__, str(exc), 2, as_json=as_json)
    except OpenProgramError as exc:  # the run failed in the library (a provider error, ...)
        return print_error(type(exc).__name__, str(exc), 1, as_json=as_json)
    except KeyboardInterrupt:
        return print_error("KeyboardInterrupt", "interrupted", 130, as_json=as_json)
    except SystemExit as exc:  # argparse's --help/--version, or sys.exit() in user code
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        if as_json and code:
            return print_error("SystemExit", f"exited with code {exc.code}", code, as_json=True)
        return code
    # Anything else is a bug of the command itself: keep its traceback, and the --json
    # promise of one object on stdout.
    except Exception as exc:  # noqa: BLE001 - reported with its traceback, never swallowed
        message = f"internal error: {type(exc).__name__}: {exc}"
        return print_error(type(exc).__name__, message, 1, as_json=as_json, error=exc)
    if as_json:
        print(json.dumps(result, default=jsonable))
    return 0


def _parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="openprogram", description="Nested agentic functions.")
    parser.add_argument("--version", action="version", version=f"openprogram {__version__}")
    sub = parser.add_subparsers(required=True, metavar="COMMAND")

    demo = sub.add_parser("demo", help="run the bundled nested example, showing the run tree live")
    demo.add_argument("destination", nargs="?", default="Paris", help="where to go (default Paris)")
    _model_and_json(demo)
    demo.set_defaults(handler=_demo_command)

    run = sub.add_parser("run", help="run any agentic function: run module:function [ARGS]")
    run.add_argument("target", help="module:function, e.g. examples.trip_planner:plan_trip")
    run.add_argument(
        "arguments",
        nargs="*",
        help="positional values or key=value, checked against the function's parameters "
        "(JSON values where a parameter is not a string)",
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
        f"Provider (default: ${MODEL_ENV_VAR}, else the embedded local model). Embedded "
        f"models: {_EMBEDDED_MODELS}",
    )
    p.add_argument(
        "--json",
        action="store_true",
        help="print one JSON object on stdout (the result, or the error); events go to "
        "stderr as JSON lines",
    )
    p.add_argument(
        "--trace-payloads",
        action="store_true",
        help="with --json: events carry argument and result values (off: hashes and sizes)",
    )


def _check_payload_flag(args: argparse.Namespace) -> None:
    if args.trace_payloads and not args.json:
        raise _UsageError(
            "--trace-payloads applies to --json events; the live tree always shows "
            "arguments and results (add --json, or drop --trace-payloads)"
        )


def _demo_command(args: argparse.Namespace) -> dict[str, Any]:
    from openprogram.cli._demo import plan_trip  # noqa: PLC0415 - only the demo needs it

    _check_payload_flag(args)
    model = choose_model(args.model)
    if not args.json:
        print(f"openprogram demo — nested agentic functions on {model_label(model)}")
        print("plan_trip → research_destination → get_weather\n")

    def body(rt: Runtime) -> Any:
        return _user_code("running the demo", lambda: plan_trip(args.destination, runtime=rt))

    return execute(model, body, as_json=args.json, trace_payloads=args.trace_payloads)


def _run_command(args: argparse.Namespace) -> dict[str, Any]:
    _check_payload_flag(args)
    target = import_attribute(args.target)
    if not callable(target) or inspect.isclass(target):
        raise ConfigurationError(
            f"run {args.target}: that is a {type(target).__name__}, not a function"
        )
    positional, keywords = parse_arguments(args.arguments)
    runner, kwargs = bind_arguments(target, args.target, positional, keywords)
    model = choose_model(args.model)

    def body(rt: Runtime) -> Any:
        with rt:  # the target's agentic functions pick up this runtime as the current one
            return _user_code(f"running {args.target}", lambda: _finish(runner(**kwargs)))

    return execute(model, body, as_json=args.json, trace_payloads=args.trace_payloads)


def _finish(value: Any) -> Any:
    """The value itself, or what it resolves to when the function was ``async``."""
    if inspect.isawaitable(value):

        async def wait() -> Any:
            return await value

        return asyncio.run(wait())
    return value


def _user_code(where: str, call: Callable[[], Any]) -> Any:
    try:
        return call()
    except (ConfigurationError, KeyboardInterrupt):
        raise  # a configuration problem (no provider, requests blocked) stays exit 2
    # Anything else the user's code raised (library errors raised through it included) is
    # reported with its traceback and exit 1.
    except Exception as exc:
        raise UserCodeError(exc, where) from exc
