"""``DBOSStore``'s database: its schema beside DBOS's, migrations, bad URLs, the extra.

What every store promises is tested on ``DBOSStore`` too, in ``test_stores.py``
and ``test_store_processes.py``; here is what only its database has.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import _postgres
import pytest
import sqlalchemy as sa

from openprogram import ConfigurationError, OpenProgramError, Runtime, UserError
from openprogram.messages import UserMessage
from openprogram.stores.dbos import DBOSStore
from openprogram.testing import ScriptedProvider

ROOT = Path(__file__).resolve().parents[2]
ENV = {**os.environ, "PYTHONPATH": str(ROOT)}


@pytest.fixture(params=["sqlite", "postgresql"])
def new_database_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A database that does not exist yet: a new file, or a new name on the server."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'runs.sqlite'}"
    return str(request.getfixturevalue("postgres_database"))


@pytest.fixture
def database_url(new_database_url: str) -> str:
    """A database that exists and is empty (made on the server, as a SQLite file is on open)."""
    if new_database_url.startswith("postgresql"):
        _postgres.create_database(new_database_url)
    return new_database_url


@pytest.fixture
def engine(database_url: str) -> Iterator[sa.Engine]:
    """A plain connection to the store's database, to look at it and tamper with it."""
    url = sa.make_url(database_url)
    if url.get_backend_name() == "postgresql":
        url = url.set(drivername="postgresql+psycopg")
    engine = sa.create_engine(url, poolclass=sa.NullPool)
    yield engine
    engine.dispose()


def test_the_database_holds_a_schema_version_and_the_store_tables(
    database_url: str, engine: sa.Engine
) -> None:
    DBOSStore(database_url).close()
    DBOSStore(database_url).close()  # a second opening finds it current
    with engine.connect() as db:
        rows = db.exec_driver_sql("SELECT id, version FROM openprogram_dbos_schema").all()
        assert rows == [(1, 2)]
    tables = set(sa.inspect(engine).get_table_names())
    assert {"openprogram_dbos_schema", "openprogram_messages", "openprogram_leases"} <= tables
    assert {"openprogram_runs", "openprogram_steps", "openprogram_decisions"} <= tables


def test_an_older_database_is_migrated_and_a_newer_one_refused(
    database_url: str, engine: sa.Engine
) -> None:
    with engine.begin() as db:  # an empty database that says it is at version 0
        db.exec_driver_sql(
            "CREATE TABLE openprogram_dbos_schema (id INTEGER PRIMARY KEY, version INTEGER)"
        )
        db.exec_driver_sql("INSERT INTO openprogram_dbos_schema VALUES (1, 0)")
    with DBOSStore(database_url) as store:
        asyncio.run(store.append_conversation("c", (UserMessage("hi"),), start=0))
    with engine.begin() as db:
        db.exec_driver_sql("UPDATE openprogram_dbos_schema SET version = 99")
    with pytest.raises(ConfigurationError, match="schema version 99, newer than this"):
        DBOSStore(database_url)


def test_processes_opening_a_new_database_at_once_create_and_migrate_it_once(
    new_database_url: str,
) -> None:
    database_url = new_database_url
    code = (
        "import sys; from openprogram.stores.dbos import DBOSStore; DBOSStore(sys.argv[1]).close()"
    )
    processes = [
        subprocess.Popen([sys.executable, "-c", code, database_url], env=ENV, text=True)
        for _ in range(4)
    ]
    assert [p.wait(timeout=120) for p in processes] == [0, 0, 0, 0]
    with DBOSStore(database_url) as store:
        chat = Runtime(ScriptedProvider(["ok"]), store=store).conversation("c")
        assert chat.send("hi") == "ok"


def test_a_database_dbos_runs_in_keeps_the_conversations_beside_dbos_tables(
    database_url: str, engine: sa.Engine
) -> None:
    with DBOSStore(database_url) as store:
        Runtime(ScriptedProvider(["Hi Ann!"]), store=store).conversation("c1").send("I am Ann.")
    # DBOS itself, in its own process: it migrates its tables into the same database
    code = """
import sys
from dbos import DBOS

@DBOS.workflow()
def double(x: int) -> int:
    return 2 * x

DBOS(config={"name": "openprogram-test", "system_database_url": sys.argv[1], "log_level": "ERROR"})
DBOS.launch()
print(double(21))
DBOS.destroy()
"""
    done = subprocess.run(
        [sys.executable, "-c", code, database_url],
        env=ENV,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.strip() == "42"
    with DBOSStore(database_url) as store:
        chat = Runtime(ScriptedProvider([]), store=store).conversation("c1")
        assert [m.text for m in chat.messages] == ["I am Ann.", "Hi Ann!"]
    inspector = sa.inspect(engine)
    schema = "dbos" if engine.dialect.name == "postgresql" else None
    assert "workflow_status" in inspector.get_table_names(schema=schema)


def test_a_missing_postgresql_database_is_created(postgres_database: str) -> None:
    with DBOSStore(postgres_database) as store:
        assert store.database_url == postgres_database
        chat = Runtime(ScriptedProvider(["ok"]), store=store).conversation("c")
        assert chat.send("hi") == "ok"


@pytest.mark.parametrize(
    ("url", "message"),
    [
        ("runs.sqlite", "is not a database URL; use 'sqlite:///path'"),
        ("mysql://u@localhost/runs", "in SQLite or PostgreSQL, not 'mysql'"),
        ("sqlite://", "the URL names no database"),
        ("sqlite:///:memory:", "in-memory SQLite database lives in one connection"),
        ("sqlite:////no/such/folder/runs.sqlite", "the folder '/no/such/folder' does not exist"),
        (42, "give the database as a URL string"),
    ],
)
def test_a_bad_url_says_what_to_give(url: object, message: str) -> None:
    with pytest.raises(ConfigurationError, match=message):
        DBOSStore(url)  # type: ignore[arg-type]


def test_an_unreachable_server_is_named_without_its_password() -> None:
    url = "postgresql://ann:s3cret@127.0.0.1:1/runs?connect_timeout=5"
    with pytest.raises(ConfigurationError, match="cannot connect to") as caught:
        DBOSStore(url)
    assert "s3cret" not in str(caught.value)
    assert "ann:***@127.0.0.1:1/runs" in str(caught.value)


def test_bad_options_and_a_closed_store_say_what_to_do(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'runs.sqlite'}"
    with pytest.raises(UserError, match=r"lease_s=0\): use a number of seconds > 0"):
        DBOSStore(url, lease_s=0)
    store = DBOSStore(url)
    assert repr(store) == f"DBOSStore({url!r})"
    store.close()
    store.close()
    with pytest.raises(OpenProgramError, match="is closed; open a new one"):
        asyncio.run(store.load_conversation("c"))


def test_without_the_extra_the_import_says_how_to_install_it() -> None:
    code = (
        "import sys; sys.modules['sqlalchemy'] = None\n"
        "try:\n    import openprogram.stores.dbos\n"
        "except ImportError as exc:\n    print(exc)"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        env=ENV,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    assert "pip install 'openprogram-ai[dbos]'" in done.stdout, done.stderr
