"""``openprogram runs`` and ``openprogram resume``: durable runs in a store, listed, shown, resumed.

Examples::

    openprogram runs --store runs.sqlite                      # id, status, waiting calls, age
    openprogram runs show run_5f1c2a9e0b7d --store runs.sqlite
    openprogram resume run_5f1c2a9e0b7d --store runs.sqlite --module mypkg.refunds \\
        --approve call_6 --deny call_7="not before Monday"

``resume`` imports the ``--module`` modules first (they define the run's
tools and agentic functions), records the decisions, and runs the run's root
exec again on ``--model``: the journal replays what was done, approved calls
run once, denied ones get the reason, and the rest goes on live, its tree
shown as it happens. A run that waits again prints what it waits on.
"""

from __future__ import annotations

import argparse
import asyncio
import time
from pathlib import Path
from typing import Any

from openprogram.cli._command import Command
from openprogram.cli._errors import UsageError
from openprogram.cli._imports import import_user_module
from openprogram.cli._model import choose_model
from openprogram.cli._run_cmd import add_model_arguments
from openprogram.cli._run_tree import record_summary, run_tree, tree_text
from openprogram.cli._tree import JsonLinesView, TreeView
from openprogram.exceptions import ConfigurationError, RunPaused
from openprogram.runtime import Runtime
from openprogram.stores import SQLiteStore

__all__ = ["RESUME", "RUNS"]


def _store(path: str) -> SQLiteStore:
    if not Path(path).is_file():
        raise ConfigurationError(
            f"--store {path}: no such file; give the SQLite file the runs were journaled in "
            "(the path given to SQLiteStore)"
        )
    return SQLiteStore(path)


# -- runs --------------------------------------------------------------------------------------


def _runs_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("action", nargs="?", choices=("show",), help="show: print one run's tree")
    p.add_argument("run_id", nargs="?", metavar="ID", help="with show: the run to show")
    p.add_argument("--store", required=True, metavar="PATH", help="the SQLite file of the runs")


def _runs(args: argparse.Namespace) -> dict[str, Any]:
    if args.action is None and args.run_id is not None:
        raise UsageError(f"runs {args.run_id}: to see one run, use runs show {args.run_id}")
    if args.action == "show" and args.run_id is None:
        raise UsageError("runs show: give the run's ID (runs --store PATH lists them)")
    store = _store(args.store)
    try:
        if args.action is None:
            records = asyncio.run(store.list_runs())
            summaries = [record_summary(r) for r in records]
            if not args.json:
                print(_table(summaries))
            return {"runs": summaries}
        stored = asyncio.run(store.load_run(args.run_id))
        if stored is None:
            raise ConfigurationError(
                f"runs show {args.run_id}: {args.store} holds no such run "
                "(runs --store PATH lists them)"
            )
        tree = run_tree(stored)
        if not args.json:
            print(tree_text(tree), end="")
        return tree
    finally:
        store.close()


def _table(runs: list[dict[str, Any]]) -> str:
    if not runs:
        return "no runs"
    rows = [("RUN ID", "STATUS", "WAITING ON", "AGE")]
    for run in runs:
        waiting = ", ".join(f"{p['tool_name']} (call {p['call_id']})" for p in run["pending"])
        rows.append((run["run_id"], run["status"], waiting or "-", _age(run["age_s"])))
    widths = [max(len(row[i]) for row in rows) for i in range(3)]
    return "\n".join(
        "  ".join(cell.ljust(width) for cell, width in zip(row[:3], widths, strict=True))
        + "  "
        + row[3]
        for row in rows
    )


def _age(seconds: float) -> str:
    for unit, size in (("d", 86_400), ("h", 3_600), ("min", 60)):
        if seconds >= size:
            return f"{seconds / size:.0f} {unit}"
    return f"{seconds:.0f} s"


RUNS = Command(
    name="runs",
    help="list the durable runs of a store, or show one run's tree",
    description="List the durable runs journaled in a SQLite store (id, status, the calls a "
    "paused run waits on, age), or with 'show ID' print one run's tree: its execs, model "
    "turns, calls, results and the calls that wait.",
    add_arguments=_runs_arguments,
    run=_runs,
)
"""``openprogram runs --store PATH`` and ``openprogram runs show ID --store PATH``."""


# -- resume ------------------------------------------------------------------------------------


def _resume_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("run_id", metavar="ID", help="the run to resume")
    p.add_argument("--store", required=True, metavar="PATH", help="the SQLite file of the run")
    p.add_argument(
        "--approve",
        action="append",
        default=[],
        metavar="CALL",
        help="run this waiting call (its call id, or its path); repeatable",
    )
    p.add_argument(
        "--deny",
        action="append",
        default=[],
        metavar="CALL=REASON",
        help="do not run this waiting call; the model is told REASON; repeatable",
    )
    p.add_argument(
        "--module",
        action="append",
        default=[],
        metavar="M",
        help="import M first: the module defining the run's tools (repeatable)",
    )
    add_model_arguments(p)


def _resume(args: argparse.Namespace) -> dict[str, Any]:
    if args.trace_payloads and not args.json:
        raise UsageError("--trace-payloads applies to --json events (add --json, or drop it)")
    deny: dict[str, str] = {}
    for item in args.deny:
        call, sep, reason = item.partition("=")
        if not sep or not call or not reason:
            raise UsageError(f"--deny {item!r}: write CALL=REASON, e.g. --deny call_7='too much'")
        deny[call] = reason
    for module in args.module:
        import_user_module(module)
    model = choose_model(args.model)
    store = _store(args.store)
    view: Any = JsonLinesView() if args.json else TreeView()
    payloads = args.trace_payloads or not args.json
    runtime = Runtime(model, store=store, observers=[view], trace_payloads=payloads)
    started = time.monotonic()
    try:
        if isinstance(view, TreeView):
            with view:
                outcome = _resumed(runtime, args, deny)
        else:
            outcome = _resumed(runtime, args, deny)
    finally:
        store.close()
    outcome["seconds"] = round(time.monotonic() - started, 3)
    if not args.json:
        if outcome["status"] == "paused":
            print(f"\n{outcome['message']}")
        else:
            print(f"\nresult ({outcome['seconds']:.1f} s):\n{outcome['output']}")
    return outcome


def _resumed(runtime: Runtime, args: argparse.Namespace, deny: dict[str, str]) -> dict[str, Any]:
    try:
        output = runtime.resume(args.run_id, approve=args.approve, deny=deny)
    except RunPaused as paused:
        return {
            "run_id": paused.run_id,
            "status": "paused",
            "message": str(paused),
            "pending": [
                {
                    "call_id": p.call_id,
                    "path": p.path,
                    "tool_name": p.tool_name,
                    "arguments": dict(p.arguments),
                }
                for p in paused.pending
            ],
        }
    return {"run_id": args.run_id, "status": "finished", "output": output}


RESUME = Command(
    name="resume",
    help="resume a durable run: approve or deny the calls it waits on, and go on",
    description="Record decisions about the calls a paused run waits on (--approve CALL, "
    "--deny CALL=REASON), then run it again from its store: finished steps come from its "
    "journal, approved calls run once, and the rest goes on live. Also goes on with a run "
    "that was killed.",
    add_arguments=_resume_arguments,
    run=_resume,
)
"""``openprogram resume ID --store PATH [--approve CALL] [--deny CALL=REASON] [--module M]``."""
