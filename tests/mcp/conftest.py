"""Fixtures of the MCP tests: real servers written with the SDK, over stdio and HTTP.

Starting a stdio server costs a Python start plus the SDK import (one to three
seconds), so one stdio connection is shared by the tests that only call tools;
tests that kill, crash or close a server start their own.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from _mcp_helpers import FLAG, STDIO_COMMAND, Served
from _mcp_servers import HttpServer

from openprogram.mcp import close_all, register_server
from openprogram.registry import Registry


@pytest.fixture(scope="session")
def stdio_workdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("mcp-stdio-cwd")


@pytest.fixture(scope="session")
def stdio(stdio_workdir: Path) -> Iterator[Served]:
    """The shared stdio server, registered with defaults plus ``env=`` and ``cwd=``."""
    registry = Registry()
    connection = register_server(
        registry, "demo", command=STDIO_COMMAND, env={FLAG: "on"}, cwd=stdio_workdir
    )
    yield Served(registry, connection)
    connection.close()


@pytest.fixture(scope="session")
def http_server() -> Iterator[HttpServer]:
    """The shared HTTP server (in a thread of this process, on a free 127.0.0.1 port)."""
    server = HttpServer().start()
    yield server
    server.stop()


@pytest.fixture
def registry() -> Registry:
    return Registry()


@pytest.fixture
def no_leftovers() -> Iterator[Callable[[], None]]:
    """A check that no thread started during the test is still alive; runs at teardown too."""
    before = set(threading.enumerate())

    def check() -> None:
        deadline = time.monotonic() + 5
        while (left := _new_threads(before)) and time.monotonic() < deadline:
            time.sleep(0.02)
        assert not left, f"threads left behind: {left}"

    yield check
    close_all()
    check()


def _new_threads(before: set[threading.Thread]) -> list[str]:
    return [t.name for t in threading.enumerate() if t not in before and t.is_alive()]
