"""The kill test: a 3-level program with a pause, SIGKILLed at random moments and restarted.

50 seeded trials on ``SQLiteStore``, 10 on each ``DBOSStore`` (each trial starts
a few interpreters that import DBOS and SQLAlchemy: 50 there would add minutes
to the suite; ``bench/bench_durable.py --kills 500`` runs 500). In every
trial: no step the journal held when an attempt started runs again in it;
every ``side_effect`` body runs at most once (a kill inside one leaves an
unknown outcome, never a second run); every idempotent body runs with the
key of its position; the output equals an uninterrupted run's.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from openprogram.stores import MemoryStore

from ._refunds import REFUNDS, kill_trial, uninterrupted_output

TRIALS = {"sqlite": 50, "dbos": 10}
"""Trials per kind of store (the prefix of its place)."""


def test_killed_and_restarted_runs_redo_nothing_finished(place: str, tmp_path: Path) -> None:
    expected = uninterrupted_output(MemoryStore(), "reference")
    trials_here = TRIALS[place.partition(":")[0]]
    with ThreadPoolExecutor(2) as pool:  # two children at a time: each trial mostly waits
        trials = list(
            pool.map(
                lambda seed: kill_trial(seed, place, tmp_path / f"log-{seed}"), range(trials_here)
            )
        )
    assert [t.reexecuted for t in trials if t.reexecuted] == []
    assert [t.seed for t in trials if max(t.side_effects.values()) > 1] == []
    # Each refund ran exactly once, or a kill landed between its started mark and its end.
    assert [
        t.seed
        for t in trials
        if not all(t.side_effects.get(path) == 1 or path in t.unknown for path in REFUNDS)
    ] == []
    assert [t.wrong_keys for t in trials if t.wrong_keys] == []
    assert [t.seed for t in trials if t.output != expected] == []
    assert sum(t.kills for t in trials) >= trials_here // 2  # the trials were killed, often
