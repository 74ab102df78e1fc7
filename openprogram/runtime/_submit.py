"""``runtime.submit``, ``submit_resume`` and ``result``: runs taken by worker processes.

With a store that queues runs (``openprogram.stores.RunQueue``: ``DBOSStore``),
``submit`` writes a run's record (its content and options, as a durable run's
root exec writes them) and enqueues it; a worker (``openprogram worker``)
runs it as ``runtime.resume(run_id)`` would. ``submit_resume`` records
decisions about a paused run's calls and enqueues the run again, for a worker
to go on with. ``result`` waits until the run is no longer running and reads
it back by its id, in any process: a finished run's output by replaying its
journal here (no model call, no tool body runs: everything is recorded), a
paused one as ``RunPaused``, a failed one as ``RunFailed``.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from openprogram.durable import dumps_json
from openprogram.exceptions import (
    ConfigurationError,
    JournalDivergence,
    RunFailed,
    RunPaused,
    UserError,
)
from openprogram.messages import user_content
from openprogram.messages._json import encode_message
from openprogram.runtime._options import ExecOptions
from openprogram.runtime._resume import decisions_for, resume_run
from openprogram.runtime._run import new_run_id
from openprogram.runtime._run_record import options_record
from openprogram.stores import RunQueue, RunStore

if TYPE_CHECKING:
    from openprogram.runtime._runtime import Runtime

__all__ = ["run_result", "submit_resume", "submit_run"]

_FIRST_WAIT_S = 0.02
_LONGEST_WAIT_S = 0.5


def _queue(runtime: Runtime, what: str) -> Any:
    store = runtime.store
    if not isinstance(store, RunQueue) or not isinstance(store, RunStore):
        raise ConfigurationError(
            f"{what} needs a store whose runs workers take from a queue: "
            "Runtime(provider, store=DBOSStore('postgresql://…')); "
            f"{type(store).__name__} has no queue (run the exec here instead)"
        )
    return store


async def submit_run(runtime: Runtime, content: Any, options: ExecOptions) -> str:
    """Write the run's record and enqueue it; its id (see the module docstring).

    Raises:
        ConfigurationError: The store has no queue.
        UserError: Options a worker cannot run the exec with (no written form).
        JournalDivergence: ``run_id`` names a run submitted with other content or options.
    """
    store = _queue(runtime, "submit")
    run_id = options.run_id or new_run_id()
    text = dumps_json(encode_message(user_content(content), "submit content"))
    recorded = options_record(options)
    unresumable = json.loads(recorded).get("unresumable")
    if unresumable:
        raise UserError(
            f"submit: a worker could not run this exec: {'; '.join(unresumable)}; give tools "
            "registered by name in modules the workers import, and options with a JSON form"
        )
    async with store.open_run(run_id, content=text, options=recorded) as stored:
        was = stored.record
        if (was.content, was.options) != (text, recorded):
            raise JournalDivergence(
                f"submit(run_id={run_id!r}): that run was submitted with other content or "
                "options; use a new run_id",
                run_id=run_id,
                path="",
            )
    await store.enqueue_run(run_id, run_id)
    return run_id


async def submit_resume(
    runtime: Runtime, run_id: str, approve: Iterable[str], deny: Mapping[str, str] | None
) -> str:
    """Record decisions about a paused run's calls and enqueue it again; ``run_id``.

    Raises:
        ConfigurationError: The store has no queue.
        UserError: No such run, a finished one, or a decision naming no waiting call.
    """
    store = _queue(runtime, f"submit_resume({run_id!r})")
    stored = await store.load_run(run_id)
    if stored is None:
        raise UserError(f"submit_resume({run_id!r}): the store holds no run {run_id!r}")
    if stored.record.status == "finished":
        raise UserError(f"submit_resume({run_id!r}): the run has finished; result() reads it")
    decisions = decisions_for(stored, approve, deny)
    if decisions:
        await store.record_decisions(run_id, decisions)
    await store.record_steps(run_id, (), status="running")
    await store.enqueue_run(run_id, f"{run_id}:resume:{time.time_ns()}")
    return run_id


async def run_result(runtime: Runtime, run_id: str, timeout_s: float | None) -> Any:
    """Wait until ``run_id`` is no longer running; its output (see the module docstring).

    Raises:
        RunPaused: It waits for a person (``submit_resume`` goes on with it).
        RunFailed: It raised.
        TimeoutError: It was still running after ``timeout_s``.
        UserError: No such run.
    """
    store = runtime.store
    if not isinstance(store, RunStore):
        raise ConfigurationError(
            f"result({run_id!r}) needs the store the run is journaled in: "
            "Runtime(provider, store=DBOSStore('postgresql://…'))"
        )
    deadline = None if timeout_s is None else time.monotonic() + timeout_s
    wait = _FIRST_WAIT_S
    while True:
        stored = await store.load_run(run_id)
        if stored is None:
            raise UserError(f"result({run_id!r}): the store holds no run {run_id!r}")
        record = stored.record
        if record.status != "running":
            break
        if deadline is not None and time.monotonic() >= deadline:
            raise TimeoutError(f"result({run_id!r}): still running after {timeout_s} s")
        await asyncio.sleep(wait)
        wait = min(wait * 2, _LONGEST_WAIT_S)
    if record.status == "paused":
        waiting = ", ".join(f"{p.tool_name} at {p.path} (call {p.call_id})" for p in record.pending)
        raise RunPaused(
            f"run {run_id!r} paused: {len(record.pending)} call(s) wait for a person: {waiting}. "
            f"Go on with runtime.submit_resume({run_id!r}, approve=[call ids], deny={{call id: "
            "reason}})",
            run_id=run_id,
            pending=record.pending,
        )
    if record.status == "failed":
        raise RunFailed(f"run {run_id!r} failed: {record.error}", run_id=run_id, error=record.error)
    return await resume_run(runtime, run_id)  # finished: its journal replays, nothing runs
