"""Lazy cards: gated on metadata alone, imported on first offer, call or load; fail closed."""

from __future__ import annotations

import asyncio
import itertools
import re
import sys
import textwrap
import types
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from openprogram.exceptions import UserError
from openprogram.gates import Policy, explain, resolve, search_tools
from openprogram.registry import LazyTool, Registry
from openprogram.tools import Tool

_ids = itertools.count()
MakeModule = Callable[[str], str]

TOOL_MODULE = """
from openprogram.tools import Tool

def _forecast(args):
    return "sunny in " + args["city"]

weather = Tool(
    name="weather_impl",
    description="Weather from the module.",
    parameters={{"type": "object", "properties": {{"city": {{"type": "string"}}}},
                "required": ["city"]}},
    execute=_forecast,
    fn=lambda city: "direct " + city,
    requires_approval={approval},
    parallel_safe=False,
    timeout=7.0,
)
not_a_tool = 42
"""


@pytest.fixture
def make_module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[MakeModule]:
    """Write a module with a unique name on sys.path; it is dropped from sys.modules afterwards."""
    monkeypatch.syspath_prepend(str(tmp_path))
    created: list[str] = []

    def make(source: str) -> str:
        name = f"lazy_target_{next(_ids)}_{id(tmp_path)}"
        (tmp_path / f"{name}.py").write_text(textwrap.dedent(source))
        created.append(name)
        return name

    yield make
    for name in created:
        sys.modules.pop(name, None)


def test_cards_are_registered_and_gated_without_importing(make_module: MakeModule) -> None:
    mod = make_module(TOOL_MODULE.format(approval=False))
    reg = Registry()
    reg.lazy("weather", f"{mod}:weather", description="Current weather.", toolset="web", defer=True)
    reg.lazy("hidden", f"{mod}:weather", description="Hidden.", expose=False)
    reg.lazy("chat_unsafe", f"{mod}:weather", description="Unsafe.", unsafe_in="chat")
    reg.lazy("needs_key", f"{mod}:weather", description="Keyed.", requires_env="LAZY_TEST_KEY")
    assert reg.names() == ["chat_unsafe", "hidden", "needs_key", "weather"]
    assert "weather" in reg
    assert len(reg) == 4
    assert [t.name for t in reg.tools()] == ["weather", "hidden", "chat_unsafe", "needs_key"]
    assert reg.toolsets() == {"web": ("weather",)}
    res = resolve(reg, Policy(source="chat", deny=["zzz"]), env={})
    assert res.deferred_names == ("weather",)
    assert set(res.rejected) == {"hidden", "chat_unsafe", "needs_key"}
    assert explain("weather", Policy(), reg, env={}) is not None
    assert search_tools("weather", reg.tools())[0].name == "weather"
    assert mod not in sys.modules


def test_offering_a_card_imports_it_and_delegates(make_module: MakeModule) -> None:
    mod = make_module(TOOL_MODULE.format(approval=True))
    reg = Registry()
    card = reg.lazy("weather", f"{mod}:weather", description="Current weather.")
    assert not card.is_loaded
    assert card.requires_approval is True  # safe answer before the target is known
    res = resolve(reg, Policy())
    assert mod in sys.modules
    assert res.offered == (card,)
    assert card.is_loaded
    assert card.spec == {
        "name": "weather",
        "description": "Current weather.",
        "parameters": {
            "type": "object",
            "properties": {"city": {"type": "string"}},
            "required": ["city"],
        },
    }
    assert (card.requires_approval, card.parallel_safe, card.timeout) == (True, False, 7.0)
    assert card("Oslo") == "direct Oslo"
    result = asyncio.run(card.execute({"city": "Oslo"}))
    assert (result.content, result.is_error) == ("sunny in Oslo", False)


def test_execution_fields_come_from_the_loaded_tool(make_module: MakeModule) -> None:
    mod = make_module(TOOL_MODULE.format(approval=False))
    card = Registry().lazy("weather", f"{mod}:weather", description="d")
    assert (card.requires_approval, card.parallel_safe) == (True, False)
    card.load()
    assert (card.requires_approval, card.timeout) == (False, 7.0)


def test_get_imports_and_returns_the_loaded_tool(make_module: MakeModule) -> None:
    mod = make_module(TOOL_MODULE.format(approval=False))
    reg = Registry()
    reg.lazy("weather", f"{mod}:weather", description="Current weather.")
    assert mod not in sys.modules
    tool = reg.get("weather")
    assert mod in sys.modules
    assert tool is not None
    assert tool.is_loaded
    assert tool.fn is not None
    assert tool.fn("Rome") == "direct Rome"


def test_calling_or_executing_an_unloaded_card_imports_it(make_module: MakeModule) -> None:
    mod = make_module(TOOL_MODULE.format(approval=False))
    card = Registry().lazy("weather", f"{mod}:weather", description="d")
    result = asyncio.run(card.execute({"city": "Lima"}))
    assert result.content == "sunny in Lima"
    assert mod in sys.modules


def test_import_failure_fails_the_tool_closed_never_the_run() -> None:
    reg = Registry()
    reg.lazy("ok", "json:dumps", description="fine")
    reg.lazy("broken", "lazy_no_such_module_xyz.tools:thing", description="Broken.")
    res = resolve(reg, Policy(deny=["ok"]))
    rejection = res.rejected["broken"]
    assert rejection.layer == "L4 availability"
    assert "lazy_no_such_module_xyz.tools:thing" in rejection.reason
    assert "ModuleNotFoundError" in rejection.reason
    assert explain("broken", Policy(), reg) == rejection
    with pytest.raises(ImportError, match=re.escape("lazy_no_such_module_xyz.tools:thing")):
        reg.get("broken")
    card = reg.tools()[1]
    result = asyncio.run(card.execute({}))
    assert result.is_error
    assert "lazy_no_such_module_xyz" in result.content


def test_a_failed_import_is_remembered(
    monkeypatch: pytest.MonkeyPatch, make_module: MakeModule
) -> None:
    counter = types.SimpleNamespace(imports=0)
    monkeypatch.setitem(sys.modules, "lazy_counter_sink", counter)
    mod = make_module("""
        import lazy_counter_sink
        lazy_counter_sink.imports += 1
        raise RuntimeError("cannot start: no GPU")
    """)
    reg = Registry()
    card = reg.lazy("gpu", f"{mod}:tool", description="Needs a GPU.")
    for _ in range(3):
        assert "RuntimeError: cannot start: no GPU" in resolve(reg, Policy()).rejected["gpu"].reason
    with pytest.raises(ImportError, match="no GPU"):
        card.load()
    assert counter.imports == 1
    assert card.load_error is not None


def test_a_target_that_is_not_a_tool_fails_like_an_import(make_module: MakeModule) -> None:
    mod = make_module(TOOL_MODULE.format(approval=False))
    reg = Registry()
    reg.lazy("number", f"{mod}:not_a_tool", description="d")
    reg.lazy("missing_attr", f"{mod}:nope", description="d")
    res = resolve(reg, Policy())
    assert "is not a tool" in res.rejected["number"].reason
    assert "AttributeError" in res.rejected["missing_attr"].reason


def test_a_plain_function_target_is_coerced(make_module: MakeModule) -> None:
    mod = make_module('''
        def shout(text: str) -> str:
            """Shout the text."""
            return text.upper()
    ''')
    card = Registry().lazy("shout", f"{mod}:shout", description="Shout.")
    assert card("hi") == "HI"
    assert card.target_tool.fn is not None


def test_malformed_target_is_a_user_error() -> None:
    with pytest.raises(UserError, match=re.escape("pkg.module:attr")):
        Registry().lazy("x", "no_colon_here", description="d")


def test_the_module_registering_its_own_tool_is_not_a_duplicate(
    monkeypatch: pytest.MonkeyPatch, make_module: MakeModule
) -> None:
    reg = Registry()
    monkeypatch.setitem(sys.modules, "lazy_registry_sink", types.SimpleNamespace(reg=reg))
    source = """
        from lazy_registry_sink import reg
        from openprogram.tools import Tool

        def weather(city):
            return "sunny"

        tool = reg.register(Tool(name="weather", fn=weather, execute=lambda args: "sunny"))
    """
    first, second = make_module(source), make_module(source)
    card = reg.lazy("weather", f"{first}:tool", description="Weather.")
    assert resolve(reg, Policy()).offered == (card,)  # importing registered "weather": absorbed
    assert reg.tools() == [card]
    assert card.target_tool.fn is not None
    reg.unregister("weather")
    other = reg.lazy("weather", f"{second}:tool", description="Weather.")
    __import__(second)  # a plain import of the card's module is absorbed too
    assert reg.tools() == [other]
    assert not other.is_loaded


def test_a_same_named_tool_from_elsewhere_is_still_a_duplicate() -> None:
    reg = Registry()
    reg.lazy("weather", "json:dumps", description="Weather.")
    with pytest.raises(ValueError, match="lazy card 'weather' -> json:dumps"):
        reg.register(Tool(name="weather", execute=lambda args: "x", origin="elsewhere.weather"))


def test_entry_point_style_card_description_switches_to_the_target(
    make_module: MakeModule,
) -> None:
    mod = make_module(TOOL_MODULE.format(approval=False))
    card = LazyTool(name="weather", target=f"{mod}:weather", placeholder="weather from a plugin")
    assert card.description == "weather from a plugin"
    card.load()
    assert card.description == "Weather from the module."
    assert repr(card) == f"LazyTool('weather', target='{mod}:weather', loaded)"


def test_card_repr_shows_state() -> None:
    card = LazyTool(name="gone", target="lazy_missing_mod_q:x", description="d")
    assert repr(card) == "LazyTool('gone', target='lazy_missing_mod_q:x', not loaded)"
    with pytest.raises(ImportError):
        card.load()
    assert repr(card).endswith("failed)")


def test_tool_interface_defaults_for_plain_tools() -> None:
    tool = Tool(name="plain", execute=lambda args: None)
    assert tool.is_loaded
    assert tool.load() is tool
