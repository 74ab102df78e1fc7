"""Suite-wide rule: no test sends a real model request unless it says so.

``OPENPROGRAM_ALLOW_MODEL_REQUESTS=0`` is set for the whole run (and so for
every subprocess a test starts): a real provider raises ``ModelRequestsBlocked``
before sending anything, and ``Runtime()`` with no provider cannot start the
embedded model. Tests that talk to a real provider on purpose carry a marker
and run with requests allowed:

- ``local_llm``: the embedded model; ``live``: real vendor APIs;
- ``model_requests``: provider wire tests against loopback servers on 127.0.0.1.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

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


@pytest.fixture
def clean_registry() -> Iterator[None]:
    """Unregister what decorators in a test (or a doc's example) add to the default registry."""
    before = set(default_registry.names())
    yield
    for name in set(default_registry.names()) - before:
        default_registry.unregister(name)
