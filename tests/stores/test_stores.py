"""The ``Store`` protocol on every kind of store (``conftest.py``); ``SQLiteStore``'s file.

Tests taking ``store`` or ``store_factory`` state what every store promises and
run on each kind; the others are about ``SQLiteStore``'s file (``DBOSStore``'s
database has its own, ``test_dbos_store.py``).
"""

from __future__ import annotations

import asyncio
import doctest
import importlib
import os
import sqlite3
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from openprogram import ConfigurationError, OpenProgramError, Runtime, UserError
from openprogram.messages import AssistantMessage, TextContent, UserMessage
from openprogram.providers.base import ProviderRequest
from openprogram.stores import SQLiteStore, Store
from openprogram.stores._schema import SCHEMA_VERSION
from openprogram.testing import FunctionProvider

from .conftest import StoreFactory

HELLO = (UserMessage("Hello"), AssistantMessage((TextContent("Hi!"),), model="m"))


def test_a_conversation_is_appended_to_and_read_back(store: Store) -> None:
    async def main() -> None:
        assert isinstance(store, Store)
        assert await store.load_conversation("c1") == ()
        await store.append_conversation("c1", HELLO, start=0)
        await store.append_conversation("c1", (UserMessage("Bye"),), start=2)
        assert await store.load_conversation("c1") == (*HELLO, UserMessage("Bye"))
        assert await store.load_conversation("c1", 2) == (UserMessage("Bye"),)
        assert await store.load_conversation("c2") == ()
        loaded = await store.load_conversation("c1")
        assert isinstance(loaded[1], AssistantMessage)
        assert loaded[1].model == "m"

    asyncio.run(main())


def test_an_append_that_lost_a_race_writes_nothing(store: Store) -> None:
    async def main() -> None:
        await store.append_conversation("c1", HELLO, start=0)
        with pytest.raises(OpenProgramError, match="expected 1 stored message"):
            await store.append_conversation("c1", (UserMessage("late"),), start=1)
        assert await store.load_conversation("c1") == HELLO

    asyncio.run(main())


def test_holders_of_a_conversation_take_turns_in_arrival_order(store: Store) -> None:
    order: list[str] = []
    inside = threading.Lock()

    async def hold(name: str, arrived: asyncio.Event | None) -> None:
        async with store.lock_conversation("c1"):
            assert inside.acquire(blocking=False), "two holders at once"
            order.append(name)
            if arrived is not None:
                await arrived.wait()
            await asyncio.sleep(0.01)
            inside.release()

    async def main() -> None:
        everyone_waits = asyncio.Event()
        first = asyncio.ensure_future(hold("first", everyone_waits))
        await asyncio.sleep(0.01)
        later = []
        for name in ("second", "third", "fourth"):
            later.append(asyncio.ensure_future(hold(name, None)))
            await asyncio.sleep(0.01)
        later[1].cancel()  # a waiter that gives up does not lose the others their turns
        everyone_waits.set()
        await asyncio.gather(first, later[0], later[2])

    asyncio.run(main())
    assert order == ["first", "second", "fourth"]


def test_the_file_has_a_schema_version_and_wal(tmp_path: Path) -> None:
    path = tmp_path / "chats.sqlite"
    SQLiteStore(path).close()
    with sqlite3.connect(path) as db:
        assert db.execute("SELECT version FROM openprogram_schema").fetchall() == [(2,)]
        assert db.execute("PRAGMA journal_mode").fetchone() == ("wal",)
        tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    db.close()
    assert {"openprogram_schema", "openprogram_messages", "openprogram_leases"} <= tables
    assert SCHEMA_VERSION == 2


def test_an_older_file_is_migrated_and_a_newer_one_refused(tmp_path: Path) -> None:
    old = tmp_path / "old.sqlite"
    db = sqlite3.connect(old)
    db.execute("CREATE TABLE openprogram_schema (id INTEGER PRIMARY KEY, version INTEGER)")
    db.execute("INSERT INTO openprogram_schema VALUES (1, 0)")
    db.commit()
    db.close()
    with SQLiteStore(old) as store:
        asyncio.run(store.append_conversation("c", HELLO, start=0))
    newer = tmp_path / "newer.sqlite"
    SQLiteStore(newer).close()
    db = sqlite3.connect(newer)
    db.execute("UPDATE openprogram_schema SET version = 99")
    db.commit()
    db.close()
    with pytest.raises(ConfigurationError, match="schema version 99, newer than this"):
        SQLiteStore(newer)


def test_bad_paths_and_options_and_a_closed_store_say_what_to_do(tmp_path: Path) -> None:
    with pytest.raises(ConfigurationError, match="does not exist; create it first"):
        SQLiteStore(tmp_path / "missing" / "chats.sqlite")
    with pytest.raises(UserError, match=r"lease_s=0\): use a number of seconds > 0"):
        SQLiteStore(tmp_path / "chats.sqlite", lease_s=0)
    store = SQLiteStore(tmp_path / "chats.sqlite")
    store.close()
    store.close()
    with pytest.raises(OpenProgramError, match="is closed; open a new one"):
        asyncio.run(store.load_conversation("c"))


def echo(request: ProviderRequest) -> str:
    return "ok"


def test_nothing_is_written_outside_the_store_path(
    store_factory: StoreFactory, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home, work = tmp_path / "home", tmp_path / "work"
    for folder in (home, work):
        folder.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.chdir(work)
    Runtime(FunctionProvider(echo)).conversation("c").send("hi")  # in memory
    Runtime(FunctionProvider(echo), store=store_factory()).conversation("c").send("hi")
    assert list(home.iterdir()) == []
    assert list(work.iterdir()) == []
    # a file store writes its file (and SQLite's -wal/-shm beside it); a server store, nothing
    assert {p.name for p in store_factory.data.iterdir()} <= {
        "chats.sqlite",
        "chats.sqlite-wal",
        "chats.sqlite-shm",
    }


def test_two_store_objects_on_one_place_take_turns(store_factory: StoreFactory) -> None:
    one, two = store_factory(), store_factory()
    chats = [Runtime(FunctionProvider(echo), store=s).conversation("c") for s in (one, two)]

    def client(index: int) -> None:
        for turn in range(10):
            chats[index].send(f"{index}:{turn}")

    threads = [threading.Thread(target=client, args=(i,)) for i in (0, 1)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    stored = chats[0].messages
    assert len(stored) == 40
    assert all(isinstance(m, UserMessage) for m in stored[::2])
    assert all(isinstance(m, AssistantMessage) for m in stored[1::2])


@pytest.mark.parametrize(
    "name",
    [
        "openprogram.stores._memory",
        "openprogram.stores._sqlite",
        "openprogram.stores.dbos._store",
        "openprogram.runtime._conversation",
    ],
)
def test_docstring_examples_run(name: str) -> None:
    module = importlib.import_module(name)
    failed, attempted = doctest.testmod(module)
    assert attempted > 0
    assert failed == 0


def test_a_busy_file_makes_a_send_wait_without_blocking_its_event_loop(tmp_path: Path) -> None:
    path = tmp_path / "chats.sqlite"
    with SQLiteStore(path, busy_timeout_s=60) as store:
        chat = Runtime(FunctionProvider(echo), store=store).conversation("c")
        writer = sqlite3.connect(path, isolation_level=None)
        writer.execute("BEGIN IMMEDIATE")  # another process's write, in progress

        async def main() -> str:
            # The write ends by a callback of this very loop: a send that blocked the loop
            # while waiting for the file would never let it run.
            asyncio.get_running_loop().call_later(0.2, writer.execute, "COMMIT")
            return await chat.asend("hi")

        try:
            assert asyncio.run(main()) == "ok"
        finally:
            writer.close()


def test_a_file_locked_longer_than_the_busy_timeout_is_an_error(tmp_path: Path) -> None:
    path = tmp_path / "chats.sqlite"
    with SQLiteStore(path, busy_timeout_s=0.2) as store:
        writer = sqlite3.connect(path, isolation_level=None)
        writer.execute("BEGIN IMMEDIATE")
        try:
            chat = Runtime(FunctionProvider(echo), store=store).conversation("c")
            with pytest.raises(OpenProgramError, match=r"locked for more than busy_timeout_s=0.2"):
                chat.send("hi")
        finally:
            writer.execute("ROLLBACK")
            writer.close()
        assert Runtime(FunctionProvider(echo), store=store).conversation("c").send("hi") == "ok"


def test_import_openprogram_does_not_load_sqlite_nor_dbos() -> None:
    code = (
        "import sys, openprogram, openprogram.stores; "
        "print(sorted({'sqlite3', 'dbos', 'sqlalchemy', 'psycopg'} & set(sys.modules)))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
        env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])},
    )
    assert done.stdout.strip() == "[]"  # each store loads what it needs when first asked for


def test_a_long_send_keeps_its_turn_past_the_lease_by_renewing_it(
    store_factory: StoreFactory,
) -> None:
    seen: list[int] = []

    async def slow(request: ProviderRequest) -> str:
        await asyncio.sleep(1.0)  # more than three lease lengths
        return "slow reply"

    def counting(request: ProviderRequest) -> str:
        seen.append(len(request.messages))
        return "ok"

    # Two store objects: their leases meet only in the database (same process, so only
    # the expiry, or the renewals keeping it off, decide).
    first, second = store_factory(lease_s=0.3), store_factory(lease_s=0.3)
    slow_chat = Runtime(FunctionProvider(slow), store=first).conversation("c")
    other = Runtime(FunctionProvider(counting), store=second).conversation("c")

    async def main() -> None:
        sending = asyncio.ensure_future(slow_chat.asend("first"))
        await asyncio.sleep(0.1)  # the slow send holds the turn
        assert await other.asend("second") == "ok"
        assert await sending == "slow reply"

    asyncio.run(main())
    assert seen == [3]  # the second send waited for the first one's two messages
    assert [m.text for m in other.messages] == ["first", "slow reply", "second", "ok"]
