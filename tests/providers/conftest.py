"""Fixtures of the provider wire tests: a loopback server and a clean environment."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from openprogram.testing import allow_model_requests

from ._server import WireServer

_PROVIDER_ENV = (
    "OPENAI_API_KEY",
    "OPENAI_BASE_URL",
    "OPENPROGRAM_MODEL",
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_BASE_URL",
    "GEMINI_API_KEY",
    "GOOGLE_API_KEY",
    "AWS_ACCESS_KEY_ID",
    "AWS_SECRET_ACCESS_KEY",
    "AWS_SESSION_TOKEN",
    "AWS_REGION",
    "AWS_DEFAULT_REGION",
    "AWS_BEARER_TOKEN_BEDROCK",
    "OLLAMA_HOST",
)


@pytest.fixture
def wire() -> Iterator[WireServer]:
    """A scripted HTTP server on 127.0.0.1; real provider requests to it are allowed.

    (The suite blocks real model requests, see tests/conftest.py; a test that asks
    for this server talks to it on purpose.)
    """
    with WireServer() as server, allow_model_requests():
        yield server


@pytest.fixture
def clean_env(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    """No provider keys or URLs from the developer's shell leak into a test."""
    for name in _PROVIDER_ENV:
        monkeypatch.delenv(name, raising=False)
    return monkeypatch
