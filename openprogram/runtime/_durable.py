"""The root exec of a durable run: open the run, keep its journal, end it with its status.

With a store that keeps runs (``openprogram.stores.RunStore``), every
top-level exec is a durable run (docs/durable.md): it holds the run (one
holder at a time, across processes), reads what was recorded once, and gives
the tree a ``Journal`` through the frame. It ends the run as ``finished``,
``failed`` (what it raised) or ``paused`` (the calls that wait, from the
``PauseSignal`` the tree raised, which becomes ``RunPaused``), writing what is
still queued in the same transaction. Execs nested in a durable tree take
their journal from the frame and a run id derived from the root's and their
position, so the traces of a run run again line up.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Any, cast

from openprogram.context import Frame
from openprogram.durable import Journal, dumps_json, path_text
from openprogram.exceptions import (
    ConfigurationError,
    JournalDivergence,
    OpenProgramError,
    RunPaused,
    UserError,
)
from openprogram.messages import UserMessage
from openprogram.messages._json import encode_message
from openprogram.runtime._options import ExecOptions
from openprogram.runtime._run import RunState
from openprogram.runtime._run_record import options_record
from openprogram.runtime._waiting import PauseSignal
from openprogram.stores import RunStore
from openprogram.stores._protocol import conforms

__all__ = ["join_tree", "run_durably", "run_store"]

logger = logging.getLogger("openprogram.durable")


def run_store(runtime: Any, options: ExecOptions, parent: Frame) -> RunStore | None:
    """The store a top-level exec journals its run in (``None``: it is not durable).

    Raises:
        UserError: ``run_id=`` on an exec nested in another's run.
        ConfigurationError: ``run_id=`` without a store that keeps runs.
    """
    if parent.scope is not None:
        if options.run_id is not None:
            raise UserError(
                f"exec(run_id={options.run_id!r}) inside a tool call: a nested exec belongs to "
                "the run of the outermost exec (its steps are journaled there); pass run_id= "
                "to the outermost exec only"
            )
        return None
    store = runtime.store
    if store is not None and conforms(store, RunStore):
        return cast(RunStore, store)
    if options.run_id is not None:
        raise ConfigurationError(
            f"exec(run_id={options.run_id!r}) needs a store to journal the run in: pass "
            "Runtime(store=SQLiteStore(path)) (or MemoryStore() for one process)"
            + ("" if store is None else f"; {type(store).__name__} keeps no runs")
        )
    return None


def join_tree(run: RunState, parent: Frame) -> None:
    """A nested exec of a durable tree: its journal, and its run id (root's id and position)."""
    journal = parent.journal
    if journal is not None:
        run.journal = journal
        exec_key = path_text(run.path[len(journal.root) :])  # keys count from the run's root
        run.run_id = f"{journal.run_id}/{exec_key}"
        run.key_prefix = f"{exec_key}/"


async def run_durably(
    run: RunState,
    store: RunStore,
    message: UserMessage,
    loop: Callable[[RunState], Awaitable[Any]],
) -> Any:
    """Run the root exec ``run`` with its run held and journaled in ``store``.

    Raises:
        RunPaused: Calls wait for a person (the run is recorded as paused).
    """
    content = dumps_json(encode_message(message, "exec content"))
    fresh = run.options.run_id is None  # made up just now: nothing to read or contend for
    async with store.open_run(
        run.run_id, content=content, options=options_record(run.options), fresh=fresh
    ) as stored:
        journal = Journal(store, stored, run.path)
        run.journal = journal
        try:
            output = await loop(run)
        except JournalDivergence:
            # Not the run failing: another program asked for it. It stays as it was.
            was = stored.record
            await journal.close(was.status, was.pending, was.error)
            raise
        except PauseSignal as signal:
            await journal.close("paused", signal.pending)
            run.stop_reason = "paused"
            raise RunPaused(
                _paused_text(run.run_id, signal), run_id=run.run_id, pending=signal.pending
            ) from None
        except BaseException as exc:
            await _failed(journal, exc)
            raise
        await journal.close("finished")
        return output


async def _failed(journal: Journal, exc: BaseException) -> None:
    try:
        await journal.close("failed", error=f"{type(exc).__name__}: {exc}"[:2000])
    except OpenProgramError as unwritten:  # the exec's own error is the one to raise
        logger.warning(
            "run %r failed and its status could not be written: %s", journal.run_id, unwritten
        )


def _paused_text(run_id: str, signal: PauseSignal) -> str:
    waiting = ", ".join(f"{p.tool_name} at {p.path} (call {p.call_id})" for p in signal.pending)
    return (
        f"run {run_id!r} paused: {len(signal.pending)} call(s) wait for a person: {waiting}. "
        f"Go on with runtime.resume({run_id!r}, approve=[call ids], deny={{call id: reason}}) "
        "in any process sharing the store"
    )
