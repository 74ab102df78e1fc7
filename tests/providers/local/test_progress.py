"""First-use progress lines: joining and verifying the weights, starting the server, ready.

Run on fake weight parts and the fake child (never the real model).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from openprogram.providers.local import LOCAL_MODEL, PROFILES
from openprogram.providers.local._embedded import (
    PROGRESS_ENV_VAR,
    ServerOptions,
    Supervisor,
    _child,
    _server,
    ensure_weights,
    progress_to,
)
from openprogram.providers.local._profile import WeightsSpec

from . import _fake_child
from .test_weights import CHUNKS, _install_fake_parts


@pytest.fixture
def spec(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> WeightsSpec:
    site = tmp_path / "site"
    site.mkdir()
    made = _install_fake_parts(site, "fakeprogress", CHUNKS)
    monkeypatch.syspath_prepend(str(site))
    return made


def test_joining_reports_parts_size_target_and_verification(
    spec: WeightsSpec, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cache = tmp_path / "cache"
    ensure_weights(spec, cache)
    lines = capsys.readouterr().err.splitlines()
    size_mb = f"{spec.size / 1e6:.1f} MB"
    assert lines[0] == (
        f"openprogram: joining the local model's weights: 3 parts, {size_mb} -> "
        f"{cache / 'model.gguf'}"
    )
    assert re.fullmatch(
        rf"openprogram: weights verified \({re.escape(size_mb)}, sha256 {spec.sha256[:12]}…\) "
        r"in \d+\.\d s",
        lines[1],
    )
    ensure_weights(spec, cache)  # verified already: nothing to say
    assert capsys.readouterr().err == ""


def test_the_lines_can_be_silenced_or_redirected(
    spec: WeightsSpec,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv(PROGRESS_ENV_VAR, "0")
    ensure_weights(spec, tmp_path / "a")
    assert capsys.readouterr().err == ""
    seen: list[str] = []
    with progress_to(seen.append):
        ensure_weights(spec, tmp_path / "b")
    assert len(seen) == 2
    assert seen[0].startswith("joining the local model's weights: 3 parts")
    assert seen[1].startswith("weights verified")
    assert capsys.readouterr().err == ""


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[Supervisor]:
    """A supervisor whose child is the fake (no model); stopped after the test."""
    monkeypatch.setattr(_child, "CHILD_CODE", _fake_child.CODE)
    monkeypatch.setattr(_server, "ensure_weights", lambda spec: tmp_path / "model.gguf")
    monkeypatch.setenv("FAKE_CHILD_MODE", "ok")
    supervisor = Supervisor(PROFILES[LOCAL_MODEL], ServerOptions(start_timeout_s=60.0, threads=1))
    yield supervisor
    supervisor.stop()


def test_starting_the_server_reports_start_and_ready_with_the_port(
    fake: Supervisor, capsys: pytest.CaptureFixture[str]
) -> None:
    url = fake.ensure()
    lines = capsys.readouterr().err.splitlines()
    port = url.removesuffix("/v1").rsplit(":", 1)[1]
    assert lines[0] == "openprogram: starting the local model server (qwen2.5-coder-0.5b, 1 thread)"
    assert re.fullmatch(
        rf"openprogram: local model ready on 127\.0\.0\.1:{port} after \d+\.\d s", lines[1]
    )
    fake.ensure()  # already running: silent
    assert capsys.readouterr().err == ""
