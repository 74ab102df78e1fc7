"""Registry: registration order, lookups, duplicates with both origins, toolsets, version."""

from __future__ import annotations

import logging
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

from openprogram.exceptions import UserError
from openprogram.gates import Policy, resolve
from openprogram.registry import Registry, default_registry
from openprogram.tools import Tool


def _run(args: Any) -> str:
    return "ok"


def _tool(name: str, **options: Any) -> Tool:
    return Tool(name=name, description=f"{name} tool", execute=_run, **options)


def weather_a() -> str:
    return "sunny"


def weather_b() -> str:
    return "rainy"


def test_lookups_follow_the_contract() -> None:
    reg = Registry()
    for name in ("zeta", "alpha", "mid"):
        reg.register(_tool(name))
    assert reg.names() == ["alpha", "mid", "zeta"]
    assert [t.name for t in reg.tools()] == ["zeta", "alpha", "mid"]
    assert [s["name"] for s in reg.schemas()] == ["zeta", "alpha", "mid"]
    assert reg.schemas()[0] == {
        "name": "zeta",
        "description": "zeta tool",
        "parameters": {"type": "object", "properties": {}, "additionalProperties": False},
    }
    assert "alpha" in reg
    assert "nope" not in reg
    assert len(reg) == 3
    got = reg.get("mid")
    assert got is not None
    assert got.name == "mid"
    assert reg.get("nope") is None


def test_register_returns_the_tool_and_coerces_tool_likes() -> None:
    reg = Registry()
    spec_dict = {"spec": {"name": "echo", "description": "Echo."}, "execute": _run}
    tool = reg.register(spec_dict)
    assert isinstance(tool, Tool)
    assert reg.get("echo") is tool
    with pytest.raises(TypeError, match="not a tool"):
        reg.register(42)


def test_duplicate_name_raises_value_error_naming_both_origins() -> None:
    reg = Registry()
    reg.register(Tool(name="weather", fn=weather_a, execute=_run))
    with pytest.raises(ValueError, match="weather") as info:
        reg.register(Tool(name="weather", fn=weather_b, execute=_run))
    text = str(info.value)
    assert f"{__name__}.weather_a" in text
    assert f"{__name__}.weather_b" in text
    assert "replace=True" in text
    assert isinstance(info.value, UserError)


_CELL = """
from openprogram import agentic_function, function


@function(registry=registry)
def greet(name: str) -> str:
    \"\"\"Greet someone.\"\"\"
    return "{greeting}, " + name


@agentic_function(registry=registry)
def plan(goal: str) -> str:
    \"\"\"Plan the steps towards a goal.\"\"\"
    return "{greeting}: " + goal
"""


def _run_cell(registry: Registry, module: str, greeting: str) -> None:
    """Run a notebook cell's source the way Jupyter does: in a module's namespace."""
    namespace: dict[str, Any] = {"__name__": module, "registry": registry}
    exec(_CELL.format(greeting=greeting), namespace)


def test_running_a_notebook_cell_again_replaces_its_tools(caplog: pytest.LogCaptureFixture) -> None:
    reg = Registry()
    reg.register(_tool("first"))
    _run_cell(reg, "__main__", "Hello")
    reg.register(_tool("last"))
    with caplog.at_level(logging.DEBUG, logger="openprogram.registry"):
        _run_cell(reg, "__main__", "Hi")
    greet, plan = reg.get("greet"), reg.get("plan")
    assert greet is not None
    assert plan is not None
    assert (greet(name="Ada"), plan.fn("tea")) == ("Hi, Ada", "Hi: tea")
    assert reg.names() == ["first", "greet", "last", "plan"]
    assert [t.name for t in reg.tools()] == ["first", "greet", "plan", "last"]  # places kept
    assert "'greet': __main__.greet was defined again" in caplog.text


def test_a_same_named_function_from_another_module_is_still_a_duplicate() -> None:
    reg = Registry()
    _run_cell(reg, "notebook_one", "Hello")
    with pytest.raises(UserError, match=r"notebook_one\.greet.*notebook_two\.greet"):
        _run_cell(reg, "notebook_two", "Hi")
    greet = reg.get("greet")
    assert greet is not None
    assert greet(name="Ada") == "Hello, Ada"


def test_registering_the_same_object_again_is_a_no_op() -> None:
    reg = Registry()
    tool = reg.register(_tool("a"))
    version = reg.version
    assert reg.register(tool) is tool
    assert reg.version == version
    assert len(reg) == 1


def test_replace_true_swaps_the_tool_in_place() -> None:
    reg = Registry()
    reg.register(_tool("a"))
    reg.register(_tool("b"))
    newer = _tool("a", defer=True)
    assert reg.register(newer, replace=True) is newer
    assert reg.get("a") is newer
    assert [t.name for t in reg.tools()] == ["a", "b"]


def test_unregister_removes_and_unknown_name_raises_key_error() -> None:
    reg = Registry()
    reg.register(_tool("a"))
    reg.unregister("a")
    assert "a" not in reg
    with pytest.raises(KeyError, match="no tool named 'a'"):
        reg.unregister("a")


def test_version_changes_on_every_mutation() -> None:
    reg = Registry()
    seen = [reg.version]

    def changed() -> None:
        assert reg.version not in seen
        seen.append(reg.version)

    reg.register(_tool("a"))
    changed()
    reg.register(_tool("a"), replace=True)
    changed()
    reg.define_toolset("web", ["a"])
    changed()
    reg.lazy("card", "json:dumps", description="A card.")
    changed()
    reg.unregister("a")
    changed()


def test_toolsets_merge_declared_membership_and_definitions() -> None:
    reg = Registry()
    reg.register(_tool("fetch", toolset="web"))
    reg.register(_tool("search", toolset=("web", "research")))
    reg.register(_tool("shell"))
    reg.define_toolset("ops", ["shell", "deploy_later"])
    reg.define_toolset("web", ["shell"])
    assert reg.toolsets() == {
        "web": ("fetch", "search", "shell"),
        "research": ("search",),
        "ops": ("shell", "deploy_later"),
    }


def test_define_toolset_validates_its_arguments() -> None:
    reg = Registry()
    with pytest.raises(UserError, match="reserved"):
        reg.define_toolset("none", ["a"])
    with pytest.raises(UserError, match="invalid toolset name"):
        reg.define_toolset("", ["a"])
    with pytest.raises(UserError, match="members must be tool names"):
        reg.define_toolset("web", ["a", 3])  # type: ignore[list-item]
    reg.define_toolset("solo", "only_one")
    assert reg.toolsets() == {"solo": ("only_one",)}


def test_redefining_a_toolset_replaces_its_members() -> None:
    reg = Registry()
    reg.define_toolset("web", ["a", "b"])
    reg.define_toolset("web", ["c"])
    assert reg.toolsets() == {"web": ("c",)}


def test_default_registry_is_a_registry() -> None:
    assert isinstance(default_registry, Registry)


def test_snapshot_is_reused_until_a_mutation() -> None:
    reg = Registry()
    reg.register(_tool("a"))
    first = reg.snapshot()
    assert reg.snapshot() is first
    reg.register(_tool("b"))
    second = reg.snapshot()
    assert second is not first
    assert [t.name for t in second.tools] == ["a", "b"]
    assert second.version == reg.version


def test_concurrent_registration_and_resolution_stay_consistent() -> None:
    reg = Registry()

    def add(worker: int) -> None:
        for i in range(100):
            reg.register(_tool(f"w{worker}_{i}"))

    def read() -> None:
        for _ in range(50):
            names = reg.names()
            offered = resolve(reg, Policy()).offered_names
            assert len(offered) <= len(reg)
            assert sorted(names) == names

    with ThreadPoolExecutor(max_workers=6) as pool:
        futures = [pool.submit(add, w) for w in range(4)] + [pool.submit(read) for _ in range(2)]
        for future in futures:
            future.result()
    assert len(reg) == 400
    assert len(resolve(reg, Policy()).offered) == 400
