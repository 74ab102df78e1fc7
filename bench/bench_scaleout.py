"""Scale-out: runs per second drained by 1, 2 and 3 worker processes from one PostgreSQL queue.

Run alone: ``python bench/bench_scaleout.py [--runs 100] [--rounds 3] [--concurrency 4]``
with ``OPENPROGRAM_TEST_POSTGRES_URL`` naming a server (``eval "$(bash
scripts/postgres.sh start)"`` starts a throwaway one).

Each round, for 1, 2 and 3 workers (``openprogram worker`` processes on
``tests/scaleout/_program``: the 3-level refund program, each model turn and
tool body working 10 ms, 6 steps per run), on a fresh database: the workers
start, then ``--runs`` runs are submitted and the clock runs from the first
submit to the last run read back as finished (its record). Prints the median
over rounds of runs per second for each worker count.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import sqlalchemy as sa  # noqa: E402 - after the path set-up

from openprogram.stores.dbos import DBOSStore  # noqa: E402
from tests.scaleout import _program  # noqa: E402
from tests.scaleout._workers import Workers  # noqa: E402


def _database(server: str) -> str:
    return server.rsplit("/", 1)[0] + f"/bench_{uuid.uuid4().hex[:10]}"


def _drop(url: str) -> None:
    name = sa.make_url(url).database
    engine = sa.create_engine(
        sa.make_url(url).set(drivername="postgresql+psycopg", database="postgres"),
        isolation_level="AUTOCOMMIT",
    )
    with engine.connect() as db:
        db.exec_driver_sql(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    engine.dispose()


def one(server: str, count: int, runs: int, concurrency: int, folder: Path) -> float:
    """Runs per second with ``count`` workers draining ``runs`` runs."""
    url = _database(server)
    DBOSStore(url).close()  # the database and its tables, before the workers race for them
    workers = Workers(url, folder / f"log-{uuid.uuid4().hex[:6]}")
    try:
        for n in range(count):
            workers.start(f"bench-{n}", concurrency=concurrency)
        with DBOSStore(url) as store:
            runtime = _program.runtime(store)
            started = time.perf_counter()
            ids = [
                runtime.submit(_program.content(f"o{n}", 40), tools=[_program.handle_order])
                for n in range(runs)
            ]
            while True:
                records = asyncio.run(store.list_runs())
                done = sum(r.status == "finished" for r in records if r.run_id in set(ids))
                if done == runs:
                    break
                time.sleep(0.02)
            return runs / (time.perf_counter() - started)
    finally:
        workers.close()
        _drop(url)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--concurrency", type=int, default=4)
    args = parser.parse_args()
    server = os.environ.get("OPENPROGRAM_TEST_POSTGRES_URL")
    if not server:
        sys.exit('set OPENPROGRAM_TEST_POSTGRES_URL (eval "$(bash scripts/postgres.sh start)")')
    folder = Path(os.environ.get("TMPDIR", "/tmp"))
    results: dict[int, list[float]] = {1: [], 2: [], 3: []}
    for _ in range(args.rounds):
        for count, rates in results.items():
            rates.append(one(server, count, args.runs, args.concurrency, folder))
    for count, rates in results.items():
        spread = ", ".join(f"{r:.1f}" for r in rates)
        print(f"{count} worker(s): {statistics.median(rates):.1f} runs/s (rounds: {spread})")


if __name__ == "__main__":
    main()
