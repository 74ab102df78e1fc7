"""``openprogram run`` and ``openprogram demo``: run an agentic function, show its tree.

Without ``--json`` the run tree is printed live (``TreeView``) and the result
follows. With ``--json`` every event is one JSON line on stderr and stdout
gets one JSON object (stable; keys are only ever added)::

    {"output": <the return value, made JSON by the rules of ``_json``>,
     "result": <the same value (its first name, kept for scripts written against it)>,
     "model": "local:qwen2.5-coder-0.5b", "seconds": 12.3,
     "stop_reason": "stop", "model_calls": 4, "tool_calls": 2,
     "input_tokens": 1234, "output_tokens": 56}

``stop_reason`` is the outermost run's; counts and tokens add up the whole tree.
Events carry argument and result values only with ``--trace-payloads``.
"""

from __future__ import annotations

import argparse
import asyncio
import inspect
import reprlib
import threading
import time
from collections.abc import Callable
from typing import Any

from openprogram.cli._args import bind_arguments, parse_arguments
from openprogram.cli._command import Command
from openprogram.cli._demo import plan_trip
from openprogram.cli._errors import UsageError, run_user_code
from openprogram.cli._imports import import_attribute
from openprogram.cli._model import choose_model, model_label
from openprogram.cli._tree import JsonLinesView, TreeView
from openprogram.events import AgentEnd, Event, ProviderResponseReceived, ToolCallStarted
from openprogram.exceptions import ConfigurationError
from openprogram.providers import Provider
from openprogram.providers.local import LOCAL_MODEL, LOCAL_MODELS
from openprogram.providers.local._embedded import progress_to
from openprogram.runtime import MODEL_ENV_VAR, Runtime

__all__ = ["DEMO", "RUN", "add_model_arguments", "execute"]


class _Totals:
    """Adds up the whole run tree from its events (observers may run on worker threads)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.model_calls = 0
        self.tool_calls = 0
        self.input_tokens = 0
        self.output_tokens = 0
        self.stop_reason: str | None = None

    def __call__(self, event: Event) -> None:
        with self._lock:
            if isinstance(event, ProviderResponseReceived):
                self.model_calls += 1
            elif isinstance(event, ToolCallStarted):
                self.tool_calls += 1
            elif isinstance(event, AgentEnd):
                self.input_tokens += event.input_tokens
                self.output_tokens += event.output_tokens
                if event.parent_run_id is None:
                    self.stop_reason = event.stop_reason


def execute(
    model: str | Provider,
    body: Callable[[Runtime], Any],
    *,
    as_json: bool,
    trace_payloads: bool,
) -> dict[str, Any]:
    """Run ``body`` on a runtime for ``model``, showing events; return the summary.

    Without ``as_json`` the result is printed after the live tree (whose lines show
    arguments and results: it is the user's own terminal). With it, events go to
    stderr as JSON lines carrying argument and result values only if
    ``trace_payloads``; the caller prints the summary.
    """
    view: Any = JsonLinesView() if as_json else TreeView()
    totals = _Totals()
    payloads = trace_payloads or not as_json
    runtime = Runtime(model, observers=[view, totals], trace_payloads=payloads)
    started = time.monotonic()
    if isinstance(view, TreeView):
        with view:
            result = body(runtime)
    else:
        with progress_to(view.note):  # stderr stays JSON lines only
            result = body(runtime)
    elapsed = time.monotonic() - started
    if not as_json:
        print(f"\nresult ({elapsed:.1f} s):\n{_printable(result)}")
    return {
        "output": result,
        "result": result,
        "model": model_label(model),
        "seconds": round(elapsed, 3),
        "stop_reason": totals.stop_reason,
        "model_calls": totals.model_calls,
        "tool_calls": totals.tool_calls,
        "input_tokens": totals.input_tokens,
        "output_tokens": totals.output_tokens,
    }


def _printable(value: Any) -> str:
    """``str(value)``; abbreviated when it is nested too deeply for ``str`` to finish."""
    try:
        return str(value)
    except RecursionError:
        return reprlib.repr(value)


# -- the commands ---------------------------------------------------------------------------

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


def add_model_arguments(p: argparse.ArgumentParser) -> None:
    """``--model`` and ``--trace-payloads``, the options of every command that runs a model."""
    p.add_argument(
        "--model",
        help='provider string, e.g. "openai:gpt-4o-mini", or module:factory returning a '
        f"Provider (default: ${MODEL_ENV_VAR}, else the embedded local model). Embedded "
        f"models: {_EMBEDDED_MODELS}",
    )
    p.add_argument(
        "--trace-payloads",
        action="store_true",
        help="with --json: events carry argument and result values (off: hashes and sizes)",
    )


def _check_payload_flag(args: argparse.Namespace) -> None:
    if args.trace_payloads and not args.json:
        raise UsageError(
            "--trace-payloads applies to --json events; the live tree always shows "
            "arguments and results (add --json, or drop --trace-payloads)"
        )


def _demo_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("destination", nargs="?", default="Paris", help="where to go (default Paris)")
    add_model_arguments(p)


def _demo(args: argparse.Namespace) -> dict[str, Any]:
    _check_payload_flag(args)
    model = choose_model(args.model)
    if not args.json:
        print(f"openprogram demo — nested agentic functions on {model_label(model)}")
        print("plan_trip → research_destination → get_weather\n")

    def body(rt: Runtime) -> Any:
        return run_user_code("running the demo", lambda: plan_trip(args.destination, runtime=rt))

    return execute(model, body, as_json=args.json, trace_payloads=args.trace_payloads)


def _run_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "target",
        metavar="MODULE:FUNCTION",
        help="the function to run, e.g. examples.trip_planner:plan_trip",
    )
    p.add_argument(
        "arguments",
        nargs="*",
        default=[],
        metavar="ARG",
        help="positional values or key=value, checked against the function's parameters "
        "(JSON values where a parameter is not a string)",
    )
    add_model_arguments(p)


def _run(args: argparse.Namespace) -> dict[str, Any]:
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
            return run_user_code(f"running {args.target}", lambda: _finish(runner(**kwargs)))

    return execute(model, body, as_json=args.json, trace_payloads=args.trace_payloads)


def _finish(value: Any) -> Any:
    """The value itself, or what it resolves to when the function was ``async``."""
    if inspect.isawaitable(value):

        async def wait() -> Any:
            return await value

        return asyncio.run(wait())
    return value


DEMO = Command(
    name="demo",
    help="run the bundled nested example, showing the run tree live",
    add_arguments=_demo_arguments,
    run=_demo,
)

RUN = Command(
    name="run",
    help="run any agentic function: run module:function [ARGS]",
    description="Run an agentic function (or a plain one) with arguments from the command "
    "line, checked against its parameters; async functions are awaited.",
    add_arguments=_run_arguments,
    run=_run,
)
