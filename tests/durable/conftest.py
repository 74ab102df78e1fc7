"""The stores durable runs are tested on: one suite, parametrised.

``store`` is an empty store of each kind that keeps runs (``MemoryStore``,
``SQLiteStore``, ``DBOSStore`` on SQLite and on PostgreSQL); ``place`` names a
store that processes share, as ``_refunds.open_store`` reads it
(``sqlite:PATH``, ``dbos:URL``), for tests with real processes. Another store
joins the suite by adding its kind to ``KINDS`` (and to ``SHARED`` when
processes can share it) and a branch to ``_refunds.open_store``.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from openprogram.stores import MemoryStore

from ._refunds import open_store

KINDS = ("memory", "sqlite", "dbos-sqlite", "dbos-postgresql")
"""Every kind of store the in-process tests run on."""
SHARED = ("sqlite", "dbos-sqlite", "dbos-postgresql")
"""The kinds that several processes share (the kill and cross-process tests)."""


def _place(kind: str, request: pytest.FixtureRequest, folder: Path) -> str:
    if kind == "sqlite":
        return f"sqlite:{folder / 'runs.sqlite'}"
    if kind == "dbos-sqlite":
        return f"dbos:sqlite:///{folder / 'runs.sqlite'}"
    assert kind == "dbos-postgresql"
    return f"dbos:{request.getfixturevalue('postgres_database')}"


@pytest.fixture(params=KINDS)
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Any]:
    """An empty store of each kind, closed when the test ends."""
    if request.param == "memory":
        yield MemoryStore()
        return
    opened = open_store(_place(request.param, request, tmp_path))
    try:
        yield opened
    finally:
        opened.close()


@pytest.fixture(params=SHARED)
def place(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A store place that processes share, empty."""
    return _place(request.param, request, tmp_path)
