"""Durable runs shared by real processes: a pause resumed by another, one runner at a time."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

from ._refunds import DENIED, ROOT, unknown_outcomes

WAIT_S = 120.0
"""Upper bound on waits for another process (generous: the machine may be busy)."""
ENV = {**os.environ, "PYTHONPATH": str(ROOT)}


def refunds(*args: str) -> tuple[int, dict[str, object]]:
    """Run the refund program's child process to its end: exit code and its JSON line."""
    done = subprocess.run(
        [sys.executable, "-m", "tests.durable._refunds", *args],
        env=ENV,
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=WAIT_S,
        check=False,
    )
    assert done.stdout.startswith("READY"), done.stderr[-3000:]
    return done.returncode, json.loads(done.stdout.splitlines()[-1])


def logged(log: Path) -> list[list[str]]:
    return [line.split("\t") for line in log.read_text().splitlines()]


def test_a_pause_two_levels_deep_is_resumed_by_a_fresh_interpreter(
    place: str, tmp_path: Path
) -> None:
    log = tmp_path / "log.txt"
    code, paused = refunds("run", place, "day-1", str(log), "1")
    assert (code, paused["status"]) == (10, "paused")
    (pending,) = paused["pending"]  # type: ignore[misc]
    assert pending["path"] == "1.1/0/1.1"
    # The next day: another interpreter, the same store, a person's approval.
    code, finished = refunds("resume", place, "day-1", str(log), "2", pending["call_id"])
    assert (code, finished["status"]) == (0, "finished")
    assert finished["output"] == (
        "Order A handled (order A: 40 EUR, paid by card). "
        "Order B handled (order B: 40 EUR, paid by card)."
    )
    refunds_run = [row for row in logged(log) if row[1] == "issue_refund"]
    assert sorted(row[2] for row in refunds_run) == ["1.0/0/1.1", "1.1/0/1.1"]  # once each
    assert [row[0] for row in refunds_run if row[2] == "1.1/0/1.1"] == ["2"]  # after approval
    assert unknown_outcomes(place, "day-1") == set()


def test_a_denied_refund_never_runs_and_the_model_reads_why(place: str, tmp_path: Path) -> None:
    log = tmp_path / "log.txt"
    code, paused = refunds("run", place, "day-2", str(log), "1")
    assert code == 10
    call_id = paused["pending"][0]["call_id"]  # type: ignore[index]
    code, finished = refunds("deny", place, "day-2", str(log), "2", call_id)
    assert (code, finished["status"]) == (0, "finished")
    rows = logged(log)
    assert [row[2] for row in rows if row[1] == "issue_refund"] == ["1.0/0/1.1"]  # A only
    (seen,) = [row[3] for row in rows if row[1] == "model" and row[2] == "1.1/0/2"]
    assert seen == f"Tool call 'issue_refund' was denied: {DENIED}"


def test_two_processes_never_run_one_run_at_once(place: str, tmp_path: Path) -> None:
    marker, release, log = tmp_path / "marker", tmp_path / "release", tmp_path / "log"
    argv = [sys.executable, "-m", "tests.durable._holder", place, "one-at-a-time"]
    argv += [str(marker), str(release), str(log)]
    first = subprocess.Popen(argv, env=ENV, cwd=ROOT, stdout=subprocess.PIPE, text=True)
    deadline = time.monotonic() + WAIT_S
    while not marker.exists():
        assert time.monotonic() < deadline, "the first process never started its tool"
        assert first.poll() is None
        time.sleep(0.02)
    second = subprocess.Popen(argv, env=ENV, cwd=ROOT, stdout=subprocess.PIPE, text=True)
    time.sleep(1.0)  # ample time for the second to start its body, if it could
    assert log.read_text().count("body") == 1
    assert second.poll() is None  # it waits for the run
    release.touch()
    outputs = [p.communicate(timeout=WAIT_S)[0] for p in (first, second)]
    assert outputs == ["done: released\n", "done: released\n"]  # the second replayed it
    assert log.read_text().count("body") == 1
