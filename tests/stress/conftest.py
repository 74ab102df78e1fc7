"""The stress suite: leaks are failures here.

``ResourceWarning`` is already an error project-wide, but one raised in a
finalizer (an unclosed socket collected by ``gc``) is only reported by pytest
as ``PytestUnraisableExceptionWarning``; an exception escaping a background
thread likewise. In this folder both fail the test that caused them.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from providers._server import WireServer

from openprogram.testing import allow_model_requests

_HERE = Path(__file__).parent

_LEAKS_ARE_ERRORS = (
    "error::ResourceWarning",
    "error::pytest.PytestUnraisableExceptionWarning",
    "error::pytest.PytestUnhandledThreadExceptionWarning",
)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if _HERE in item.path.parents:
            for rule in _LEAKS_ARE_ERRORS:
                item.add_marker(pytest.mark.filterwarnings(rule))


@pytest.fixture(scope="module")
def wire() -> Iterator[WireServer]:
    """One scripted loopback HTTP server for a whole module (hypothesis reuses it per example)."""
    with WireServer() as server, allow_model_requests():  # requests to it are on purpose
        yield server
