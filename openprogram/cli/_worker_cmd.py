"""``openprogram worker``: take durable runs from a ``DBOSStore``'s queue and run them.

Example::

    openprogram worker --store postgresql://app:secret@db:5432/runs --module mypkg.refunds \\
        --model openai:gpt-4o-mini --concurrency 8

The ``--module`` modules are imported first (they define the runs' tools and
agentic functions). The runs run on ``--model``, or on the runtime
``--runtime module:factory`` returns when called with the store (for an
approval hook, observers, a budget). The worker prints one line when it takes
runs and stops on SIGTERM or Ctrl-C; runs it was running are then recovered
by another worker. See docs/scale-out.md.
"""

from __future__ import annotations

import argparse
import signal
import threading
from typing import Any

from openprogram.cli._command import Command
from openprogram.cli._errors import UsageError
from openprogram.cli._imports import import_attribute, import_user_module
from openprogram.cli._model import choose_model
from openprogram.exceptions import ConfigurationError
from openprogram.runtime import Runtime

__all__ = ["WORKER"]


def _arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--store", required=True, metavar="URL", help="the DBOSStore database: postgresql://… "
        "(or sqlite:///path for one machine)"
    )  # fmt: skip
    p.add_argument(
        "--module",
        action="append",
        default=[],
        metavar="M",
        help="import M first: a module defining the runs' tools (repeatable)",
    )
    p.add_argument("--model", help="the provider the runs run on (as for 'openprogram run')")
    p.add_argument(
        "--runtime",
        metavar="MODULE:FACTORY",
        help="instead of --model: a function taking the store and returning the Runtime",
    )
    p.add_argument("--executor-id", metavar="ID", help="this worker's id, unique among live ones")
    p.add_argument("--concurrency", type=int, default=4, metavar="N", help="runs at once (4)")


def _worker(args: argparse.Namespace) -> dict[str, Any]:
    if args.runtime and args.model:
        raise UsageError("--runtime and --model: give one (the factory's runtime has a provider)")
    if args.concurrency < 1:
        raise UsageError(f"--concurrency {args.concurrency}: use a whole number >= 1")
    try:
        from openprogram.stores.dbos import DBOSStore, Worker  # noqa: PLC0415 - the extra
    except ImportError as exc:
        raise ConfigurationError(str(exc)) from None
    for module in args.module:
        import_user_module(module)
    store = DBOSStore(args.store)
    try:
        if args.runtime:
            runtime = import_attribute(args.runtime)(store)
            if not isinstance(runtime, Runtime) or runtime.store is not store:
                raise ConfigurationError(
                    f"--runtime {args.runtime}: return Runtime(provider, store=store) built on "
                    f"the store it is given, not {runtime!r:.80}"
                )
        else:
            runtime = Runtime(choose_model(args.model), store=store)
        worker = Worker(runtime, executor_id=args.executor_id, concurrency=args.concurrency)
        stop = threading.Event()
        for signum in (signal.SIGTERM, signal.SIGINT):
            signal.signal(signum, lambda *_: stop.set())
        with worker:
            if not args.json:
                print(
                    f"worker {worker.executor_id} takes runs from {store.database_url}", flush=True
                )
            stop.wait()
    finally:
        store.close()
    return {"executor_id": worker.executor_id, "status": "stopped"}


WORKER = Command(
    name="worker",
    help="take durable runs from a DBOSStore's queue and run them (many workers, many hosts)",
    description="Start a worker: it takes the runs submitted with runtime.submit from the "
    "queue in the DBOSStore's database (PostgreSQL for many hosts), runs them (finished "
    "steps come from their journals), and re-enqueues the runs of workers that died.",
    add_arguments=_arguments,
    run=_worker,
)
"""``openprogram worker --store URL [--module M] [--model P | --runtime M:F] [--executor-id ID]
[--concurrency N]``."""
