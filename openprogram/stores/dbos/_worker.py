"""``Worker``: takes durable runs from a ``DBOSStore``'s queue and runs them in this process.

A worker launches DBOS on the store's database (one per process: DBOS is a
process-wide singleton) with the pinned application version and an executor
id of its own, listens on the runs queue with ``concurrency`` runs at once,
and runs each with its runtime (``runtime.resume(run_id)``: the run's root
exec from its record, its journal replaying what was done). It holds a lease
``executor:{id}`` while it lives; every ``recover_every_s`` seconds it looks
for runs still marked started by another executor whose lease is free (that
worker died: ``kill -9`` frees it at once on its host, anything else after
the store's ``lease_s``) and re-enqueues them, so a dead worker's runs go on
elsewhere without an operator.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import socket
import threading
from collections.abc import Callable
from functools import partial
from types import TracebackType
from typing import TYPE_CHECKING, Any

from openprogram import _threads
from openprogram.exceptions import ConfigurationError, OpenProgramError, RunPaused, UserError
from openprogram.stores.dbos._queue import (
    APP_NAME,
    APP_VERSION,
    QUEUE,
    WORKFLOW,
    dbos_url,
    pending_executors,
    recover_executor,
)

if TYPE_CHECKING:
    from openprogram.runtime import Runtime
    from openprogram.stores.dbos._store import DBOSStore

__all__ = ["Worker"]

logger = logging.getLogger("openprogram.stores")

_RUNNING: dict[str, Any] = {}
"""The runtime of this process's started worker (DBOS is one per process)."""
_REGISTERED: list[bool] = []


def _run(run_id: str) -> str:
    """The workflow: run ``run_id`` with this process's worker runtime; how it ended."""
    runtime = _RUNNING["runtime"]
    try:
        runtime.resume(run_id)
    except RunPaused:
        return "paused"
    except Exception as exc:  # noqa: BLE001 - any failure of the run: recorded in its record
        logger.warning("run %r failed: %s", run_id, exc)
        return "failed"
    return "finished"


def _register() -> None:
    from dbos import DBOS  # noqa: PLC0415 - the extra

    if not _REGISTERED:
        DBOS.workflow(name=WORKFLOW)(_run)
        _REGISTERED.append(True)


class Worker:
    """Runs the runs submitted to ``runtime.store`` (a ``DBOSStore``) in this process.

    Args:
        runtime: Runs each run (its provider, approval hook, observers); its
            store must be a ``DBOSStore``, and its registry must hold the runs'
            tools (import the modules that define them first).
        executor_id: This worker's id, unique among live workers (default: host,
            process id and random digits). A dead worker's id may be reused.
        concurrency: How many runs this worker runs at once.
        poll_s: How often an idle worker looks at the queue.
        recover_every_s: How often it looks for dead workers' runs.

    Use ``with Worker(runtime):`` (or ``start``/``stop``); ``run_forever`` blocks.
    In async code the same block works: ``start`` and ``stop`` then wait for DBOS
    to launch or shut down on a worker thread, blocking the loop that long (about
    a second on SQLite); the runs themselves execute on DBOS's threads, not on that loop.
    """

    def __init__(
        self,
        runtime: Runtime,
        *,
        executor_id: str | None = None,
        concurrency: int = 4,
        poll_s: float = 0.1,
        recover_every_s: float = 2.0,
    ) -> None:
        from openprogram.stores.dbos._store import DBOSStore  # noqa: PLC0415 - a cycle

        store = runtime.store
        if not isinstance(store, DBOSStore):
            raise ConfigurationError(
                f"Worker(runtime): the runtime's store is {store!r}; workers take runs from a "
                "DBOSStore's queue: Runtime(provider, store=DBOSStore('postgresql://…'))"
            )
        if isinstance(concurrency, bool) or not isinstance(concurrency, int) or concurrency < 1:
            raise UserError(f"Worker(concurrency={concurrency!r}): use a whole number >= 1")
        for name, value in (("poll_s", poll_s), ("recover_every_s", recover_every_s)):
            if isinstance(value, bool) or not isinstance(value, int | float) or not value > 0:
                raise UserError(f"Worker({name}={value!r}): use a number of seconds > 0")
        self.runtime = runtime
        self.store: DBOSStore = store
        self.executor_id = executor_id or (
            f"{socket.gethostname()}-{os.getpid()}-{os.urandom(3).hex()}"
        )
        self.concurrency = concurrency
        self._poll_s = poll_s
        self._recover_every_s = recover_every_s
        self._owner = os.urandom(12).hex()
        self._stop = threading.Event()
        self._watcher: threading.Thread | None = None

    def start(self) -> None:
        """Take this executor's lease, launch DBOS, and start taking runs."""
        from dbos import DBOS  # noqa: PLC0415 - the extra

        if _RUNNING:
            raise OpenProgramError(
                "a Worker already runs in this process (DBOS is one per process)"
            )
        name = f"executor:{self.executor_id}"
        left = self.store._database.transaction(
            partial(self.store._leases.claim, name=name, owner=self._owner)
        )
        if left > 0:
            raise ConfigurationError(
                f"Worker(executor_id={self.executor_id!r}): a live worker has this id; give each "
                "worker its own (or leave it out for a random one)"
            )
        _register()
        _RUNNING["runtime"] = self.runtime
        config: Any = {
            "name": APP_NAME,
            "system_database_url": dbos_url(self.store._database.url),
            "application_version": APP_VERSION,
            "executor_id": self.executor_id,
            "log_level": "WARNING",
            "notification_listener_polling_interval_sec": self._poll_s,
        }

        def launch() -> None:
            DBOS(config=config)
            DBOS.listen_queues([QUEUE])
            DBOS.launch()
            DBOS.register_queue(
                QUEUE, worker_concurrency=self.concurrency, polling_interval_sec=self._poll_s
            )

        try:
            _off_the_loop(launch)
        except BaseException:
            _RUNNING.clear()
            _off_the_loop(DBOS.destroy)
            raise
        self._watcher = threading.Thread(target=self._watch, name="openprogram-worker", daemon=True)
        self._watcher.start()

    def stop(self) -> None:
        """Stop taking runs and shut DBOS down (runs in flight are recovered elsewhere)."""
        from dbos import DBOS  # noqa: PLC0415 - the extra

        self._stop.set()
        if self._watcher is not None:
            self._watcher.join()
            self._watcher = None
        if _RUNNING:
            _off_the_loop(partial(DBOS.destroy, destroy_registry=False))
            _RUNNING.clear()

    def run_forever(self) -> None:
        """``start``, then block until ``stop`` is called (from another thread or a signal)."""
        self.start()
        self._stop.wait()

    def __enter__(self) -> Worker:
        self.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    def _watch(self) -> None:
        asyncio.run(self._renew_and_recover())

    async def _renew_and_recover(self) -> None:
        leases = self.store._leases
        name = f"executor:{self.executor_id}"
        renewing = leases.renewing(name, self._owner)
        try:
            while not self._stop.is_set():
                await asyncio.to_thread(self._stop.wait, self._recover_every_s)
                if not self._stop.is_set():
                    await asyncio.to_thread(self._recover_dead)
        finally:
            renewing.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await renewing
            await leases.free(name, self._owner)

    def _recover_dead(self) -> None:
        """Re-enqueue the started runs of every executor whose lease is free."""
        leases = self.store._leases
        try:
            executors = pending_executors() - {self.executor_id}
        except Exception as exc:  # noqa: BLE001 - the database out of reach: try next time
            logger.warning("could not list started runs: %s", exc)
            return
        for executor in executors:
            name, owner = f"executor:{executor}", os.urandom(12).hex()
            claim = partial(leases.claim, name=name, owner=owner)
            if self.store._database.transaction(claim) > 0:
                continue  # alive
            try:
                count = recover_executor(executor)
                logger.warning("re-enqueued %d run(s) of the dead worker %r", count, executor)
            finally:
                self.store._database.transaction(partial(_free_now, name=name, owner=owner))


def _free_now(db: Any, *, name: str, owner: str) -> None:
    import sqlalchemy as sa  # noqa: PLC0415 - with the extra

    db.execute(
        sa.text("DELETE FROM openprogram_leases WHERE name = :name AND owner = :owner"),
        {"name": name, "owner": owner},
    )


def _off_the_loop(work: Callable[[], object]) -> None:
    """Run ``work`` here, or on a worker thread while an event loop runs on this thread:
    DBOS's synchronous calls refuse to run beside a running loop (a ``with Worker(...)``
    block in async code)."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        work()
        return
    _threads.submit(work).result()
