"""What a store does for durable runs (``RunStore``), on every store that keeps runs."""

from __future__ import annotations

import asyncio
import json
import sqlite3
from pathlib import Path
from typing import Any

from openprogram import PendingCall
from openprogram.stores import Decision, RunStore, SQLiteStore, Step
from openprogram.stores._schema import SCHEMA_VERSION


def test_stores_keep_runs(store: Any) -> None:
    assert isinstance(store, RunStore)


def test_a_run_is_created_once_and_opened_again_as_it_was(store: Any) -> None:
    async def scenario() -> None:
        async with store.open_run("r", content='"hi"', options="{}") as fresh:
            assert fresh.record.status == "running"
            assert (fresh.steps, fresh.decisions) == ((), ())
            steps = [
                Step(key="1", kind="reply", fingerprint="f1", data='{"a": 1}'),
                Step(key="1.0", kind="started", fingerprint="", data='{"attempt": 1}'),
            ]
            await store.record_steps("r", steps)
            await store.record_steps(
                "r",
                [Step(key="1.0", kind="started", fingerprint="", data='{"attempt": 2}')],
                status="paused",
                pending=[PendingCall(call_id="c", path="1.1", tool_name="t", arguments={"x": 1})],
            )
        async with store.open_run("r", content='"other"', options='{"x": 1}') as again:
            record = again.record
            assert (record.status, record.content, record.options) == ("paused", '"hi"', "{}")
            assert record.pending == (
                PendingCall(call_id="c", path="1.1", tool_name="t", arguments={"x": 1}),
            )
            by_key = {(s.key, s.kind): json.loads(s.data) for s in again.steps}
            assert by_key == {("1", "reply"): {"a": 1}, ("1.0", "started"): {"attempt": 2}}
            decision = Decision(
                path="1.1", call_id="c", approved=False, reason="no", arguments_hash="h"
            )
            await store.record_decisions("r", [decision])
            await store.record_steps("r", [], status="finished")
        loaded = await store.load_run("r")
        assert loaded is not None
        assert loaded.record.status == "finished"
        assert loaded.decisions == (decision,)
        assert await store.load_run("nope") is None
        assert [r.run_id for r in await store.list_runs()] == ["r"]

    asyncio.run(scenario())


def test_one_holder_at_a_time(store: Any) -> None:
    order: list[str] = []

    async def hold(name: str, ready: asyncio.Event | None) -> None:
        async with store.open_run("shared", content="{}", options="{}"):
            order.append(f"{name} in")
            if ready is not None:
                ready.set()
            await asyncio.sleep(0.05)
            order.append(f"{name} out")

    async def scenario() -> None:
        ready = asyncio.Event()
        first = asyncio.create_task(hold("first", ready))
        await ready.wait()
        await hold("second", None)
        await first

    asyncio.run(scenario())
    assert order == ["first in", "first out", "second in", "second out"]


def test_a_file_of_the_conversations_schema_is_migrated_keeping_its_messages(
    tmp_path: Path,
) -> None:
    path = tmp_path / "old.sqlite"
    with sqlite3.connect(path) as db:  # what openprogram wrote before durable runs
        db.execute("CREATE TABLE openprogram_schema (id INTEGER PRIMARY KEY, version INTEGER)")
        db.execute("INSERT INTO openprogram_schema VALUES (1, 1)")
        db.execute(
            "CREATE TABLE openprogram_messages (conversation_id TEXT, position INTEGER, "
            "message TEXT, PRIMARY KEY (conversation_id, position))"
        )
        db.execute(
            "CREATE TABLE openprogram_leases (name TEXT PRIMARY KEY, owner TEXT, pid INTEGER, "
            "host TEXT, expires_at REAL)"
        )
        db.execute(
            'INSERT INTO openprogram_messages VALUES (\'c\', 0, \'{"role":"user","content":"hi"}\')'
        )
    db.close()
    with SQLiteStore(path) as store:
        assert [m.text for m in asyncio.run(store.load_conversation("c"))] == ["hi"]
        assert asyncio.run(store.list_runs()) == ()
    with sqlite3.connect(path) as db:
        assert db.execute("SELECT version FROM openprogram_schema").fetchone() == (SCHEMA_VERSION,)
    db.close()
