"""Many worker processes share one queue of durable runs on a real PostgreSQL.

Workers are ``openprogram worker`` processes on the 3-level refund program of
``_program``; the test process submits runs and reads them back by id.
"""

from __future__ import annotations

import signal
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest

from openprogram import RunPaused
from openprogram.stores.dbos import DBOSStore

from . import _program
from ._workers import WAIT_S, Workers

RUNS = 100


@pytest.fixture
def workers(postgres_database: str, tmp_path: Path) -> Iterator[Workers]:
    started = Workers(postgres_database, tmp_path / "steps.log")
    try:
        yield started
    finally:
        started.close()


def test_a_run_paused_on_one_worker_finishes_on_another_after_a_resume_from_elsewhere(
    workers: Workers,
) -> None:
    a = workers.start("worker-a")
    with DBOSStore(workers.url) as store:
        runtime = _program.runtime(store)
        run_id = runtime.submit(_program.content("big", 400), tools=[_program.handle_order])
        with pytest.raises(RunPaused) as paused:
            runtime.result(run_id, timeout_s=WAIT_S)
        workers.stop(a)
        b = workers.start("worker-b")
        [waiting] = paused.value.pending
        assert waiting.tool_name == "issue_refund"
        runtime.submit_resume(run_id, approve=[waiting.call_id])
        assert runtime.result(run_id, timeout_s=WAIT_S) == "Done: Order big handled."
    by = {what: pid for pid, what, _ in workers.lines()}
    assert by["lookup_order"] == a.pid
    assert by["issue_refund"] == b.pid
    assert workers.counts("issue_refund") == Counter({f"{run_id}:1.0/0/1.1": 1})


def mid_run(workers: Workers, pid: int) -> bool:
    """A third of the refunds made, and the worker ``pid`` in the middle of a run."""
    lines = workers.lines()
    if sum(what == "issue_refund" for _, what, _ in lines) < RUNS // 3:
        return False
    mine = [(what, key) for p, what, key in lines if p == pid]
    if not mine:
        return False
    what, key = mine[-1]  # anything but a root's last turn ("Refund<order>/2") is mid-run
    return what != "model" or not (key.startswith("Refund") and key.endswith("/2"))


def test_three_workers_finish_every_run_once_when_one_is_killed(workers: Workers) -> None:
    pool = [workers.start(f"worker-{n}") for n in range(3)]
    with DBOSStore(workers.url) as store:
        runtime = _program.runtime(store)
        run_ids = [
            runtime.submit(_program.content(f"o{n}", 40), tools=[_program.handle_order])
            for n in range(RUNS)
        ]
        killed = pool[0]
        deadline = time.monotonic() + WAIT_S
        while not mid_run(workers, killed.pid) and time.monotonic() < deadline:
            time.sleep(0.002)
        workers.stop(killed, signal.SIGKILL)
        outputs = [runtime.result(run_id, timeout_s=WAIT_S) for run_id in run_ids]
    assert outputs == [f"Done: Order o{n} handled." for n in range(RUNS)]
    lines = workers.lines()
    # No step ran twice but one the killed worker was running when it died.
    ran: dict[tuple[str, str], list[int]] = {}
    for pid, what, key in lines:
        ran.setdefault((what, key), []).append(pid)
    again = {step: pids for step, pids in ran.items() if len(pids) > 1}
    assert [step for step, pids in again.items() if pids[:-1] != [killed.pid]] == []
    assert max(workers.counts("issue_refund").values()) == 1
    # The killed worker had runs in flight, and the other workers went on with them.
    pids_by_order: dict[str, set[int]] = {}
    for pid, what, key in lines:
        if what == "model":  # its key: the exec's first word, the order, the turn
            pids_by_order.setdefault(key[6:].split("/")[0], set()).add(pid)
    assert any(killed.pid in pids and len(pids) > 1 for pids in pids_by_order.values())
    assert {pids[-1] for pids in again.values()} <= {pool[1].pid, pool[2].pid}
