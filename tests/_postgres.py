"""The PostgreSQL server of a test session: CI's, or one the session starts and stops itself.

``.ci/run`` starts a throwaway server with ``scripts/postgres.sh`` and exports
its URL as ``OPENPROGRAM_TEST_POSTGRES_URL``; without that variable the
``postgres_url`` fixture (``tests/conftest.py``) starts one the same way for
the session, and stops it at the end. Each test that needs a database takes a
fresh one (``fresh_database``) and drops it after.
"""

from __future__ import annotations

import os
import subprocess
import uuid
from pathlib import Path

import pytest

ENV_VAR = "OPENPROGRAM_TEST_POSTGRES_URL"
SCRIPT = Path(__file__).resolve().parent.parent / "scripts" / "postgres.sh"
MISSING = 3
"""The script's exit code when PostgreSQL's binaries are missing."""


def start() -> tuple[str, str]:
    """Start a server with the script: ``(url, its folder)``; skip or fail when it cannot be.

    Without PostgreSQL's binaries the test skips, saying how to get them, except
    under CI (``CI`` set), where a missing server fails the test.
    """
    done = subprocess.run(
        ["bash", str(SCRIPT), "start"], capture_output=True, text=True, timeout=180, check=False
    )
    if done.returncode == MISSING and not os.environ.get("CI"):
        pytest.skip(f"{done.stderr.strip()} (or set {ENV_VAR} to a server's URL)")
    if done.returncode != 0:
        pytest.fail(f"scripts/postgres.sh start failed ({done.returncode}): {done.stderr}")
    exported = dict(line.removeprefix("export ").split("=", 1) for line in done.stdout.splitlines())
    return exported[ENV_VAR], exported["OPENPROGRAM_TEST_POSTGRES_DIR"]


def stop(folder: str) -> None:
    """Stop the server the session started, and delete its folder."""
    subprocess.run(["bash", str(SCRIPT), "stop", folder], timeout=120, check=True)


def fresh_database(server_url: str) -> str:
    """The URL of a database of ``server_url`` no test used (``DBOSStore`` creates it)."""
    base, _, _ = server_url.rpartition("/")
    return f"{base}/test_{uuid.uuid4().hex[:16]}"


def create_database(url: str) -> None:
    """Create the (empty) database of ``url``."""
    _on_server(url, 'CREATE DATABASE "{name}"')


def drop_database(url: str) -> None:
    """Drop the database of ``url``, closing what still connects to it."""
    _on_server(url, 'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def _on_server(url: str, statement: str) -> None:
    import sqlalchemy as sa

    base, _, name = url.rpartition("/")
    server = sa.create_engine(
        sa.make_url(f"{base}/postgres").set(drivername="postgresql+psycopg"), poolclass=sa.NullPool
    )
    try:
        with server.connect().execution_options(isolation_level="AUTOCOMMIT") as connection:
            connection.exec_driver_sql(statement.format(name=name))
    finally:
        server.dispose()
