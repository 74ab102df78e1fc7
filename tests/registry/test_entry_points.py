"""load_entry_points: real installed distributions become lazy cards, imported only when used.

The main test builds a wheel, installs it with pip into a temporary target
and puts that on ``sys.path``; the others write the ``.dist-info`` directory
pip would have written, which ``importlib.metadata`` reads the same way.
"""

from __future__ import annotations

import base64
import hashlib
import itertools
import logging
import subprocess
import sys
import uuid
import zipfile
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from openprogram.gates import Policy, resolve
from openprogram.registry import LazyTool, Registry

_ids = itertools.count()  # unique names: sys.modules and metadata outlive one test

TOOLS_SOURCE = """
from openprogram.tools import Tool

def _forecast(args):
    return "sunny"

weather = Tool(name="weather", description="Current weather for a city.", execute=_forecast)
"""


WHEEL = "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n"


def _dist_files(dist: str, package: str, entry_points: str) -> dict[str, str]:
    info = f"{dist}-1.0.dist-info"
    return {
        f"{package}/__init__.py": "",
        f"{package}/tools.py": TOOLS_SOURCE,
        f"{info}/METADATA": (
            f"Metadata-Version: 2.1\nName: {dist}\nVersion: 1.0\nSummary: Weather tools for tests\n"
        ),
        f"{info}/WHEEL": WHEEL,
        f"{info}/entry_points.txt": entry_points,
    }


def _wheel(path: Path, files: dict[str, str], info: str) -> Path:
    def digest(data: bytes) -> str:
        raw = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=")
        return f"sha256={raw.decode()}"

    record = "".join(f"{p},{digest(c.encode())},{len(c.encode())}\n" for p, c in files.items())
    with zipfile.ZipFile(path, "w") as wheel:
        for name, content in files.items():
            wheel.writestr(name, content)
        wheel.writestr(f"{info}/RECORD", record + f"{info}/RECORD,,\n")
    return path


@pytest.fixture
def names() -> Iterator[tuple[str, str, str]]:
    """A unique (distribution, package, entry-point group) per test; modules dropped afterwards."""
    n = f"{next(_ids)}_{uuid.uuid4().hex[:8]}"
    package = f"op_plugin_pkg_{n}"
    yield f"op_plugin_{n}", package, f"openprogram.tools.test_{n}"
    for mod in [m for m in sys.modules if m == package or m.startswith(package + ".")]:
        del sys.modules[mod]


@pytest.fixture
def on_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Callable[[dict[str, str]], None]:
    def write(files: dict[str, str]) -> None:
        for rel, content in files.items():
            target = tmp_path / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(content)
        monkeypatch.syspath_prepend(str(tmp_path))

    return write


def test_a_pip_installed_distribution_registers_lazy_cards(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, names: tuple[str, str, str]
) -> None:
    dist, package, group = names
    files = _dist_files(dist, package, f"[{group}]\nweather = {package}.tools:weather\n")
    wheel = _wheel(
        tmp_path / f"{dist.replace('-', '_')}-1.0-py3-none-any.whl", files, f"{dist}-1.0.dist-info"
    )
    target = tmp_path / "site"
    pip = [sys.executable, "-m", "pip", "install", "--quiet", "--no-index", "--no-deps"]
    quiet = ["--disable-pip-version-check", "--root-user-action=ignore"]
    subprocess.run([*pip, *quiet, "--target", str(target), str(wheel)], check=True)
    monkeypatch.syspath_prepend(str(target))

    reg = Registry()
    assert reg.load_entry_points(group) == ["weather"]
    card = reg.tools()[0]
    assert isinstance(card, LazyTool)
    assert package not in sys.modules
    assert card.description == f"weather from distribution {dist}: Weather tools for tests"

    res = resolve(reg, Policy())
    assert res.offered == (card,)
    assert f"{package}.tools" in sys.modules
    assert card.spec["description"] == "Current weather for a city."


def test_gate_metadata_applies_and_nothing_is_imported(
    names: tuple[str, str, str], on_path: Callable[[dict[str, str]], None]
) -> None:
    dist, package, group = names
    on_path(
        _dist_files(
            dist,
            package,
            f"[{group}]\nweather = {package}.tools:weather\nforecast = {package}.tools:weather\n",
        )
    )
    reg = Registry()
    added = reg.load_entry_points(group, toolset="plugins", defer=True)
    assert added == ["weather", "forecast"]
    assert reg.toolsets() == {"plugins": ("weather", "forecast")}
    res = resolve(reg, Policy(toolset="plugins"))
    assert res.deferred_names == ("weather", "forecast")
    assert package not in sys.modules
    loaded = resolve(reg, Policy(toolset="plugins", loaded=["forecast"]))
    assert loaded.offered_names == ("forecast",)
    assert f"{package}.tools" in sys.modules


def test_loading_twice_skips_cards_already_registered(
    names: tuple[str, str, str], on_path: Callable[[dict[str, str]], None]
) -> None:
    dist, package, group = names
    on_path(_dist_files(dist, package, f"[{group}]\nweather = {package}.tools:weather\n"))
    reg = Registry()
    assert reg.load_entry_points(group) == ["weather"]
    version = reg.version
    assert reg.load_entry_points(group) == []
    assert reg.version == version


def test_a_name_clash_names_the_distribution(
    names: tuple[str, str, str], on_path: Callable[[dict[str, str]], None]
) -> None:
    dist, package, group = names
    on_path(_dist_files(dist, package, f"[{group}]\nweather = {package}.tools:weather\n"))
    reg = Registry()
    reg.lazy("weather", "json:dumps", description="Mine.")
    with pytest.raises(ValueError, match=f"entry point 'weather'.*of {dist} 1.0"):
        reg.load_entry_points(group)


def test_a_broken_plugin_fails_closed_and_a_malformed_one_is_skipped(
    names: tuple[str, str, str],
    on_path: Callable[[dict[str, str]], None],
    caplog: pytest.LogCaptureFixture,
) -> None:
    dist, package, group = names
    entries = (
        f"[{group}]\nbroken = {package}.missing:thing\nmodule_only = {package}.tools\n"
        f"weather = {package}.tools:weather\n"
    )
    on_path(_dist_files(dist, package, entries))
    reg = Registry()
    with caplog.at_level(logging.WARNING, logger="openprogram.registry"):
        assert reg.load_entry_points(group) == ["broken", "weather"]
    assert "module_only" in caplog.text
    res = resolve(reg, Policy())
    assert res.offered_names == ("weather",)
    assert f"{package}.missing:thing" in res.rejected["broken"].reason


def test_an_empty_group_registers_nothing() -> None:
    reg = Registry()
    assert reg.load_entry_points("openprogram.tools.no_such_group_anywhere") == []
    assert len(reg) == 0
