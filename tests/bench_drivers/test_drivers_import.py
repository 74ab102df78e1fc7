"""The benchmark drivers (``bench/drivers``) load both ways, and drive openprogram.

The benchmark scripts import them as ``drivers`` (``python bench/run.py``
puts ``bench/`` on ``sys.path``); anything else, run from the repository
root, imports them as ``bench.drivers``. Only openprogram's driver and the
minimal loop run here: the peer frameworks live in ``bench/.venv``.
"""

from __future__ import annotations

import asyncio
import importlib
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

_REPO = Path(__file__).resolve().parents[2]
_PEER_MODULES = {
    "pydantic_ai": "pydantic_ai",
    "openai_agents": "agents",
    "langgraph": "langchain_core",
}
"""Each peer driver's first import of its framework (missing outside ``bench/.venv``)."""
_RESULT = "BENCH-RESULT "

_PROBE = """
import importlib, json
found = {}
for name in ("openprogram", "minimal", "pydantic_ai", "openai_agents", "langgraph"):
    try:
        importlib.import_module(f"bench.drivers.{name}_driver")
        found[name] = None
    except ModuleNotFoundError as exc:
        found[name] = exc.name
print(json.dumps(found))
"""


def _run(*argv: str) -> subprocess.CompletedProcess[str]:
    """``python *argv`` in a fresh interpreter, from the repository root, on this tree."""
    paths = [str(_REPO), *filter(None, os.environ.get("PYTHONPATH", "").split(os.pathsep))]
    return subprocess.run(
        [sys.executable, *argv],
        cwd=_REPO,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(paths)},
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def test_every_driver_imports_as_bench_drivers_from_the_repository_root() -> None:
    done = _run("-c", _PROBE)
    assert done.returncode == 0, done.stderr
    found = json.loads(done.stdout)
    assert found["openprogram"] is None
    assert found["minimal"] is None
    for name, module in _PEER_MODULES.items():  # only its own framework may be missing
        assert found[name] in (None, module), f"{name}_driver: no module named {found[name]!r}"


def plus(a: int, b: int) -> int:
    """Add two integers.

    Args:
        a: First addend.
        b: Second addend.
    """
    return a + b


def test_the_openprogram_driver_imported_as_bench_drivers_plays_a_script(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.syspath_prepend(str(_REPO))
    driver: Any = importlib.import_module("bench.drivers.openprogram_driver")
    drivers: Any = importlib.import_module("bench.drivers")
    script_module: Any = importlib.import_module("bench.drivers._script")
    assert drivers.load("openprogram") is driver
    turn = (script_module.Call("plus", {"a": 1, "b": 2}),)
    agent = driver.make_agent([plus], (turn, turn, "done"))
    assert asyncio.run(agent.run()) == "done"
    assert agent.menu_bytes() == script_module.menu_bytes(
        [{"name": "plus", "description": "Add two integers.", "parameters": _schema(driver)}]
    )
    assert asyncio.run(driver.validated_call(plus)({"a": 2, "b": 3})).value == 5


def _schema(driver: Any) -> dict[str, Any]:
    """``plus``'s parameters as the driver's tools send them (not registered globally)."""
    tool = driver.function(plus, register_globally=False)
    schema: dict[str, Any] = tool.spec["parameters"]
    return schema


@pytest.mark.parametrize("framework", ["openprogram", "minimal"])
def test_a_benchmark_script_still_loads_its_drivers_as_documented(framework: str) -> None:
    done = _run(str(_REPO / "bench" / "bench_loop.py"), "--worker", framework)
    assert done.returncode == 0, done.stderr
    lines = [line for line in done.stdout.splitlines() if line.startswith(_RESULT)]
    assert len(lines) == 1, done.stdout + done.stderr
    reply = json.loads(lines[0].removeprefix(_RESULT))
    assert set(reply) == {"samples"}, reply
    assert set(reply["samples"]) == {"sync_us", "async_us"}
