"""The switch that makes every real provider request raise (the suite runs with it on)."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, ClassVar

import pytest

import openprogram
from openprogram import Runtime
from openprogram.exceptions import ConfigurationError, LLMError, ModelRequestsBlocked
from openprogram.providers import (
    AnthropicProvider,
    BedrockProvider,
    GeminiProvider,
    LocalProvider,
    OpenAIProvider,
    OpenAIResponsesProvider,
)
from openprogram.providers.local._embedded import _server
from openprogram.testing import (
    ALLOW_ENV_VAR,
    ScriptedProvider,
    allow_model_requests,
    block_model_requests,
    model_requests_allowed,
)

PACKAGE_ROOT = Path(openprogram.__file__).resolve().parents[1]


class _Counter(BaseHTTPRequestHandler):
    hits: ClassVar[list[str]] = []

    def do_POST(self) -> None:
        type(self).hits.append(self.path)
        self.send_response(500)
        self.send_header("content-length", "2")
        self.end_headers()
        self.wfile.write(b"{}")

    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture
def server() -> Iterator[str]:
    """A loopback server that counts every request and fails it."""
    _Counter.hits = []
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Counter)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()


def _providers(url: str) -> list[Any]:
    key: dict[str, Any] = {"api_key": "k", "max_retries": 0, "model": "m"}
    return [
        OpenAIProvider(base_url=f"{url}/v1", **key),
        OpenAIResponsesProvider(base_url=f"{url}/v1", **key),
        AnthropicProvider(base_url=url, **key),
        GeminiProvider(base_url=url, **key),
        BedrockProvider(
            endpoint_url=url,
            region="us-east-1",
            aws_access_key_id="AKIDEXAMPLE",
            aws_secret_access_key="secret",
            max_retries=0,
            model="m",
        ),
        LocalProvider(base_url=f"{url}/v1", max_retries=0),
    ]


def test_the_suite_blocks_requests_for_unmarked_tests() -> None:
    assert not model_requests_allowed()


@pytest.mark.model_requests
def test_a_marked_test_may_send_them() -> None:
    assert model_requests_allowed()


@pytest.mark.parametrize("index", range(6))
def test_every_real_provider_raises_before_sending(server: str, index: int) -> None:
    provider = _providers(server)[index]
    with block_model_requests(), pytest.raises(ModelRequestsBlocked) as err:
        Runtime(provider).exec("hi", tools=[])
    message = str(err.value)
    assert f"provider {provider.name!r}" in message
    assert ALLOW_ENV_VAR in message
    assert "allow_model_requests()" in message
    assert _Counter.hits == []  # nothing reached the server


@pytest.mark.parametrize("index", range(6))
def test_allowed_again_the_same_provider_reaches_the_server(server: str, index: int) -> None:
    provider = _providers(server)[index]
    with block_model_requests(), allow_model_requests(), pytest.raises(LLMError):
        Runtime(provider).exec("hi", tools=[])  # the counting server fails every request
    assert len(_Counter.hits) == 1


def test_the_environment_variable_blocks_and_allows(
    server: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    provider = OpenAIProvider(base_url=f"{server}/v1", api_key="k", model="m", max_retries=0)
    monkeypatch.setenv(ALLOW_ENV_VAR, "false")
    with pytest.raises(ModelRequestsBlocked) as err:
        Runtime(provider).exec("hi", tools=[])
    assert f"{ALLOW_ENV_VAR}=false" in str(err.value)
    monkeypatch.setenv(ALLOW_ENV_VAR, "1")
    with pytest.raises(LLMError):
        Runtime(provider).exec("hi", tools=[])
    assert len(_Counter.hits) == 1
    monkeypatch.setenv(ALLOW_ENV_VAR, "maybe")
    with pytest.raises(ConfigurationError, match="'maybe' is not understood"):
        Runtime(provider).exec("hi", tools=[])


def test_context_managers_nest_and_restore() -> None:
    with allow_model_requests():
        assert model_requests_allowed()
        with block_model_requests():
            assert not model_requests_allowed()
        assert model_requests_allowed()
    assert not model_requests_allowed()  # back to the suite's variable


def test_fakes_are_never_blocked() -> None:
    with block_model_requests():
        assert Runtime(ScriptedProvider(["hello"])).exec("hi", tools=[]) == "hello"


def test_runtime_without_a_provider_does_not_start_the_local_model(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def no_start(*args: object, **kwargs: object) -> str:
        raise AssertionError("the embedded model server would have been started")

    monkeypatch.setattr(_server.Supervisor, "ensure", no_start)
    monkeypatch.setattr("openprogram.providers.local.local_available", lambda: True)
    monkeypatch.delenv("OPENPROGRAM_MODEL", raising=False)
    with block_model_requests(), pytest.raises(ModelRequestsBlocked) as err:
        Runtime().exec("hi", tools=[])
    assert "embedded local model" in str(err.value)
    assert "no provider is configured" in str(err.value)


def test_subprocesses_of_unmarked_tests_are_blocked_too() -> None:
    assert os.environ[ALLOW_ENV_VAR] == "0"


@pytest.mark.model_requests
def test_subprocesses_of_marked_tests_are_allowed() -> None:
    assert os.environ[ALLOW_ENV_VAR] == "1"


def _child_allowed() -> str:
    """What a child process started now says about model requests."""
    code = "from openprogram.testing import model_requests_allowed; print(model_requests_allowed())"
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True
    )
    return done.stdout.strip()


def test_a_child_process_started_inside_a_block_inherits_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("PYTHONPATH", str(PACKAGE_ROOT))  # the child imports this checkout
    monkeypatch.setenv(ALLOW_ENV_VAR, "1")
    with block_model_requests():
        assert _child_allowed() == "False"
        with allow_model_requests():
            assert _child_allowed() == "True"
        assert _child_allowed() == "False"
    assert os.environ[ALLOW_ENV_VAR] == "1"  # the variable is restored ...
    monkeypatch.delenv(ALLOW_ENV_VAR)
    with block_model_requests():
        assert _child_allowed() == "False"
    assert ALLOW_ENV_VAR not in os.environ  # ... to unset, too
