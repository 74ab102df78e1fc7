"""Suite-wide rule: no test sends a real model request unless it says so.

``OPENPROGRAM_ALLOW_MODEL_REQUESTS=0`` is set for the whole run (and so for
every subprocess a test starts): a real provider raises ``ModelRequestsBlocked``
before sending anything, and ``Runtime()`` with no provider cannot start the
embedded model. Tests that talk to a real provider on purpose carry a marker
and run with requests allowed:

- ``local_llm``: the embedded model; ``live``: real vendor APIs;
- ``model_requests``: provider wire tests against loopback servers on 127.0.0.1.

``postgres_url`` is the session's PostgreSQL server (see ``tests/_postgres.py``).
"""

from __future__ import annotations

import os
from collections.abc import Iterator

import _postgres
import pytest

from openprogram.registry import default_registry
from openprogram.testing import ALLOW_ENV_VAR, allow_model_requests

os.environ[ALLOW_ENV_VAR] = "0"

_ALLOWED_BY = ("local_llm", "live", "model_requests")


@pytest.fixture(autouse=True)
def _model_requests_only_where_marked(
    request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
) -> Iterator[None]:
    if any(request.node.get_closest_marker(m) for m in _ALLOWED_BY):
        monkeypatch.setenv(ALLOW_ENV_VAR, "1")  # subprocesses the test starts are allowed too
        with allow_model_requests():
            yield
    else:
        yield


@pytest.fixture(autouse=True)
def _default_registry_left_as_found(request: pytest.FixtureRequest) -> Iterator[None]:
    """A test that adds to or takes from the default registry fails (and is undone), unless
    it asked for ``clean_registry``: what one test leaves there would be on every later
    test's menu."""
    if "clean_registry" in request.fixturenames:
        yield
        return
    before = set(default_registry.names())
    yield
    after = set(default_registry.names())
    if after != before:
        for name in after - before:
            default_registry.unregister(name)
        pytest.fail(
            f"the test left the default registry changed (added {sorted(after - before)}, "
            f"removed {sorted(before - after)}): decorate its tools with "
            "register_globally=False, or take the clean_registry fixture"
        )


@pytest.fixture
def clean_registry() -> Iterator[None]:
    """Unregister what decorators in a test (or a doc's example) add to the default registry."""
    before = set(default_registry.names())
    yield
    for name in set(default_registry.names()) - before:
        default_registry.unregister(name)


@pytest.fixture(scope="session")
def postgres_url() -> Iterator[str]:
    """The URL of a PostgreSQL server: ``$OPENPROGRAM_TEST_POSTGRES_URL``, else one started here.

    A server started here is stopped when the session ends; meanwhile the variable
    holds its URL, for the subprocesses and documentation blocks the tests run.
    """
    given = os.environ.get(_postgres.ENV_VAR)
    if given:
        yield given
        return
    url, folder = _postgres.start()
    os.environ[_postgres.ENV_VAR] = url
    try:
        yield url
    finally:
        del os.environ[_postgres.ENV_VAR]
        _postgres.stop(folder)


@pytest.fixture
def postgres_database(postgres_url: str) -> Iterator[str]:
    """The URL of a fresh database on the session's server, dropped after the test."""
    url = _postgres.fresh_database(postgres_url)
    yield url
    _postgres.drop_database(url)
