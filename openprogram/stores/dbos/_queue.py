"""Runs on a DBOS queue: the names workers and submitters agree on, enqueuing, and recovery.

A durable run taken by a worker is one DBOS workflow, ``openprogram-run``, on
the queue ``openprogram-runs``, whose only input is the run id: the run's
content and options are in the store's run record (written by ``submit``), its
journal in the store's tables. Its first execution has the workflow id
``run_id``; a resume after a pause is a new one, ``{run_id}:resume:{t}``
(``t``: nanoseconds). DBOS starts a workflow id once (a second enqueue
attaches to the first).

Every process speaks to DBOS with the application version ``APP_VERSION``,
pinned by openprogram: DBOS would otherwise derive it from a hash of the
workflows' source, and dequeue and recover runs only on workers of the same
hash, stranding queued runs after any upgrade. Replays are checked by our
journal (``JournalDivergence``), not by DBOS's version.

The one call into DBOS's private API, the recovery of a dead executor's runs,
lives here (``recover_executor``).
"""

from __future__ import annotations

import asyncio
import threading
from typing import Any

from sqlalchemy.engine import URL

__all__ = [
    "APP_NAME",
    "APP_VERSION",
    "QUEUE",
    "WORKFLOW",
    "Enqueuer",
    "dbos_url",
    "pending_executors",
    "recover_executor",
]

APP_NAME = "openprogram"
"""The DBOS application name of every worker and submitter."""
APP_VERSION = "openprogram-runs-1"
"""The DBOS application version, pinned (see the module docstring); a new journal format
that old workers cannot replay gets a new one."""
QUEUE = "openprogram-runs"
"""The DBOS queue workers take runs from."""
WORKFLOW = "openprogram-run"
"""The registered name of the workflow that runs one run (its input: the run id)."""


def dbos_url(url: URL) -> str:
    """The store's URL as DBOS takes it (password included)."""
    return url.render_as_string(hide_password=False)


class Enqueuer:
    """Enqueues runs through a ``DBOSClient`` on the store's database, made on first use."""

    def __init__(self, url: str) -> None:
        self._url = url
        self._client: Any = None
        self._lock = threading.Lock()

    def _get(self) -> Any:
        from dbos import DBOS, DBOSClient  # noqa: PLC0415 - loaded only by stores that queue

        with self._lock:
            if self._client is None:
                DBOS.migrate(self._url)  # DBOS's tables, when no worker has made them yet
                self._client = DBOSClient(system_database_url=self._url)
            return self._client

    def enqueue(self, run_id: str, workflow_id: str) -> None:
        """Enqueue the workflow ``workflow_id`` running ``run_id`` (attach if it exists)."""
        options: Any = {
            "workflow_name": WORKFLOW,
            "queue_name": QUEUE,
            "workflow_id": workflow_id,
            "app_version": APP_VERSION,
        }
        self._get().enqueue(options, run_id)

    async def aenqueue(self, run_id: str, workflow_id: str) -> None:
        """``enqueue`` on a worker thread."""
        await asyncio.to_thread(self.enqueue, run_id, workflow_id)

    def close(self) -> None:
        """Close the client's connections (idempotent)."""
        with self._lock:
            if self._client is not None:
                self._client.destroy()
                self._client = None


def pending_executors() -> set[str]:
    """The executors that hold runs of the queue still ``PENDING`` (started, not ended)."""
    from dbos import DBOS  # noqa: PLC0415 - loaded only by workers

    rows = DBOS.list_workflows(
        status="PENDING", queue_name=QUEUE, load_input=False, load_output=False
    )
    return {row.executor_id for row in rows if row.executor_id}


def recover_executor(executor_id: str) -> int:
    """Re-enqueue the ``PENDING`` runs of ``executor_id`` (a dead worker); how many.

    DBOS recovers a dead executor's workflows only when a process names it; its
    public ``resume_workflow`` would also restart a workflow still running
    elsewhere, so the private call, which matches only rows the named executor
    still owns, is the one used.
    """
    from dbos import DBOS  # noqa: PLC0415 - loaded only by workers

    return len(DBOS._recover_pending_workflows([executor_id]))
