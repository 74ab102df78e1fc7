"""The stores every guarantee of ``Store`` is tested on: one suite, parametrised.

``store`` is an empty store of each kind (in memory, ``SQLiteStore``,
``DBOSStore`` on SQLite, ``DBOSStore`` on PostgreSQL); ``store_factory`` opens
any number of store objects on one place that processes share (every kind but
memory), and ``store_factory.place`` names it for a subprocess
(``_places.open_store``).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from openprogram.stores import MemoryStore, Store

from ._places import open_store

SHARED = ("sqlite", "dbos-sqlite", "dbos-postgresql")
"""The kinds of store that threads and processes share, through a file or a server."""


class StoreFactory:
    """Opens store objects on one place; every one is closed when the test ends."""

    def __init__(self, place: str, data: Path) -> None:
        self.place = place
        """The place as ``_places.open_store`` reads it (for subprocesses)."""
        self.data = data
        """The folder of the file of a SQLite place (empty for PostgreSQL)."""
        self.opened: list[Any] = []

    def __call__(self, **options: Any) -> Store:
        store = open_store(self.place, **options)
        self.opened.append(store)
        return store

    def close(self) -> None:
        for store in self.opened:
            store.close()


def _place(kind: str, request: pytest.FixtureRequest, data: Path) -> str:
    if kind == "sqlite":
        return f"sqlite:{data / 'chats.sqlite'}"
    if kind == "dbos-sqlite":
        return f"dbos:sqlite:///{data / 'chats.sqlite'}"
    return f"dbos:{request.getfixturevalue('postgres_database')}"


@pytest.fixture(params=SHARED)
def store_factory(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[StoreFactory]:
    data = tmp_path / "data"
    data.mkdir()
    factory = StoreFactory(_place(request.param, request, data), data)
    try:
        yield factory
    finally:
        factory.close()


@pytest.fixture(params=("memory", *SHARED))
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Store]:
    if request.param == "memory":
        yield MemoryStore()
        return
    data = tmp_path / "data"
    data.mkdir()
    factory = StoreFactory(_place(request.param, request, data), data)
    try:
        yield factory()
    finally:
        factory.close()
