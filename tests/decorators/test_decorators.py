"""``@function`` and ``@agentic_function``: forms, options, registration, runtime injection."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterator
from typing import Any

import pytest

from openprogram.context import (
    get_current_frame,
    get_current_runtime,
    set_default_runtime,
    use_current_runtime,
)
from openprogram.decorators import AgenticFunction, agentic_function, function
from openprogram.exceptions import SchemaError, UserError
from openprogram.registry import Registry, default_registry
from openprogram.tools import Tool, ToolContext, to_tool


class StandInRuntime:
    """Stands in for openprogram.Runtime: the decorators only pass it around."""

    def __init__(self, label: str) -> None:
        self.label = label

    def __repr__(self) -> str:
        return f"StandInRuntime({self.label!r})"


@pytest.fixture
def reg() -> Registry:
    return Registry()


@pytest.fixture
def default_rt() -> Iterator[StandInRuntime]:
    rt = StandInRuntime("default")
    set_default_runtime(rt)
    yield rt
    set_default_runtime(None)


# -- @function ----------------------------------------------------------------------------


def test_function_bare_called_and_direct_forms_all_give_tools(reg: Registry) -> None:
    def add(a: int, b: int) -> int:
        """Add two integers."""
        return a + b

    bare = function(add, registry=reg, name="bare")
    called = function(name="called", registry=reg)(add)
    assert isinstance(bare, Tool)
    assert isinstance(called, Tool)
    assert bare(1, 2) == called(a=1, b=2) == 3
    assert reg.names() == ["bare", "called"]


def test_bare_decorator_registers_in_the_default_registry() -> None:
    @function
    def decorators_default_registry_probe(x: int) -> int:
        """Probe."""
        return x

    try:
        assert (
            default_registry.get("decorators_default_registry_probe")
            is decorators_default_registry_probe
        )
        assert decorators_default_registry_probe.spec["parameters"]["required"] == ["x"]
    finally:
        default_registry.unregister("decorators_default_registry_probe")


def test_register_globally_false_registers_nowhere() -> None:
    before = default_registry.version

    @function(register_globally=False)
    def nowhere(x: int) -> int:
        """Nowhere."""
        return x

    assert "nowhere" not in default_registry
    assert default_registry.version == before


def test_registry_and_register_globally_false_contradict(reg: Registry) -> None:
    with pytest.raises(UserError, match="contradict"):
        function(registry=reg, register_globally=False)(lambda: None)  # checked before the schema


def test_tool_options_reach_the_tool(reg: Registry) -> None:
    def check() -> bool:
        return True

    @function(
        registry=reg,
        label="Weather",
        expose=False,
        toolset=["travel"],
        unsafe_in="public",
        check_fn=check,
        requires_env="API_KEY",
        defer=True,
        requires_approval=True,
        parallel_safe=False,
        timeout=2.5,
        max_result_chars=500,
        cache=True,
        cache_ttl=9.0,
        description="Custom description.",
    )
    def weather(city: str) -> str:
        """Docstring description."""
        return city

    assert (weather.label, weather.expose, weather.toolset, weather.unsafe_in) == (
        "Weather", False, ("travel",), ("public",),
    )  # fmt: skip
    assert (weather.check_fn, weather.requires_env, weather.defer) == (check, ("API_KEY",), True)
    assert (weather.requires_approval, weather.parallel_safe, weather.timeout) == (True, False, 2.5)
    assert (weather.max_result_chars, weather.cache, weather.cache_ttl) == (500, True, 9.0)
    assert weather.description == "Custom description."


def test_parameters_option_overrides_the_derived_schema(reg: Registry) -> None:
    spec = {"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]}

    @function(registry=reg, parameters=spec)
    def search(q: Any) -> str:
        """Search."""
        return str(q)

    assert search.parameters == spec
    result = asyncio.run(search.execute({"q": 3}))
    assert result.is_error
    assert "q: expected string" in result.content


def test_unknown_option_is_a_type_error_with_a_suggestion() -> None:
    with pytest.raises(TypeError, match=r"unknown option 'timout'; did you mean 'timeout'\?"):
        function(timout=3)  # type: ignore[call-arg]
    with pytest.raises(TypeError, match="unknown option 'system'"):
        function(system="x")  # type: ignore[call-arg]


def test_flag_options_must_be_booleans() -> None:
    with pytest.raises(UserError, match="expose= must be True or False"):
        function(expose="no")  # type: ignore[arg-type]


def test_decorating_a_non_callable_says_how_to_pass_options() -> None:
    with pytest.raises(
        TypeError, match=r"pass options as keywords, e\.g\. @function\(name='my_tool'\)"
    ):
        function("my_tool")  # type: ignore[call-overload]
    with pytest.raises(TypeError, match="@agentic_function decorates a function"):
        agentic_function(42)  # type: ignore[call-overload]


def test_invalid_tool_name_is_rejected_at_decoration(reg: Registry) -> None:
    def documented() -> None:
        """Documented."""

    with pytest.raises(UserError, match=r"invalid tool name 'has space'"):
        function(name="has space", registry=reg)(documented)
    with pytest.raises(UserError, match="invalid tool name"):
        agentic_function(name="x" * 65, registry=reg)(documented)
    with pytest.raises(UserError, match=r"invalid tool name '<lambda>'.*pass name="):
        function(registry=reg, description="Anonymous.")(lambda: None)
    assert len(reg) == 0


def test_duplicate_registration_names_both_origins(reg: Registry) -> None:
    def one() -> int:
        """One."""
        return 1

    def two() -> int:
        """Two."""
        return 2

    function(one, name="same", registry=reg)
    with pytest.raises(ValueError, match="same") as err:
        function(two, name="same", registry=reg)
    assert "one" in str(err.value)
    assert "two" in str(err.value)


def test_schema_errors_surface_at_decoration(reg: Registry) -> None:
    with pytest.raises(SchemaError, match=r"\*args"):

        @function(registry=reg)
        def bad(*args: int) -> None:
            """Bad."""

    assert "bad" not in reg


def test_function_refuses_an_unbound_method_but_takes_a_bound_one(reg: Registry) -> None:
    class Service:
        def lookup(self, query: str) -> str:
            """Look up."""
            return query.upper()

    with pytest.raises(SchemaError, match="cannot wrap a method"):
        function(Service.lookup, registry=reg)
    tool = function(Service().lookup, registry=reg)
    assert tool("q") == "Q"
    assert asyncio.run(tool.execute({"query": "q"})).content == "Q"


def test_empty_docstring_warns_and_uses_the_name(reg: Registry) -> None:
    with pytest.warns(UserWarning, match="no description"):

        @function(registry=reg)
        def undocumented(x: int) -> int:
            return x

    assert undocumented.description == "undocumented"


# -- available_if (L1) ----------------------------------------------------------------------


def test_available_if_false_returns_the_function_unregistered(reg: Registry) -> None:
    def plain(x: int) -> int:
        """Plain."""
        return x

    assert function(plain, available_if=False, registry=reg) is plain
    assert agentic_function(plain, available_if=lambda: 0, registry=reg) is plain
    assert len(reg) == 0


def test_available_if_that_raises_leaves_it_undecorated_and_logs(
    reg: Registry, caplog: pytest.LogCaptureFixture
) -> None:
    def boom() -> bool:
        raise RuntimeError("no config")

    def plain() -> None:
        """Plain."""

    with caplog.at_level(logging.WARNING, logger="openprogram.decorators"):
        assert function(plain, available_if=boom, registry=reg) is plain
    assert "available_if" in caplog.text
    assert "RuntimeError" in caplog.text
    assert len(reg) == 0


def test_available_if_is_evaluated_once_at_decoration(reg: Registry) -> None:
    calls = []

    def flag() -> bool:
        calls.append(1)
        return True

    @function(available_if=flag, registry=reg)
    def present() -> str:
        """Present."""
        return "here"

    present()
    asyncio.run(present.execute({}))
    assert calls == [1]
    assert "present" in reg


# -- @agentic_function ----------------------------------------------------------------------


def test_agentic_function_is_callable_and_a_tool(reg: Registry, default_rt: StandInRuntime) -> None:
    @agentic_function(registry=reg, system="Be brief.")
    def plan(destination: str, runtime: Any) -> str:
        """Plan a trip.

        Args:
            destination: Where to go.
        """
        frame = get_current_frame()
        assert frame is not None
        assert frame.system == "Be brief."
        assert frame.name == "plan"
        assert get_current_runtime() is runtime
        return f"{destination} via {runtime.label}"

    assert isinstance(plan, AgenticFunction)
    assert plan("Paris") == "Paris via default"
    assert plan.tool.kind == "agentic"
    assert plan.spec == plan.tool.spec
    assert list(plan.spec["parameters"]["properties"]) == ["destination"]
    assert to_tool(plan) is plan.tool
    assert reg.get("plan") is plan.tool
    assert plan.__name__ == "plan"
    assert plan.__doc__ is not None
    assert "Plan a trip" in plan.__doc__
    assert get_current_frame() is None


def test_runtime_resolution_order(default_rt: StandInRuntime) -> None:
    @agentic_function(register_globally=False)
    def which(runtime: Any = None) -> str:
        """Which runtime."""
        return str(runtime.label)

    current = StandInRuntime("current")
    explicit = StandInRuntime("explicit")
    assert which() == "default"
    assert which(None) == "default"
    with use_current_runtime(current):
        assert which() == "current"
        assert which(runtime=explicit) == "explicit"
        assert which(explicit) == "explicit"


def test_nested_agentic_calls_see_the_outer_runtime_and_their_own_frame(
    default_rt: StandInRuntime,
) -> None:
    @agentic_function(register_globally=False, system="inner prompt")
    def inner(runtime: Any) -> tuple[str, str | None]:
        """Inner."""
        frame = get_current_frame()
        return runtime.label, frame.system if frame else None

    @agentic_function(register_globally=False, system="outer prompt")
    def outer(runtime: Any) -> tuple[Any, str | None]:
        """Outer."""
        result = inner()
        frame = get_current_frame()
        return result, frame.system if frame else None

    assert outer(StandInRuntime("given")) == (("given", "inner prompt"), "outer prompt")


def test_async_agentic_function(default_rt: StandInRuntime) -> None:
    @agentic_function(register_globally=False)
    async def fetch(url: str, runtime: Any) -> str:
        """Fetch."""
        await asyncio.sleep(0)
        frame = get_current_frame()
        return f"{url}:{runtime.label}:{frame.name if frame else None}"

    assert asyncio.run(fetch("u")) == "u:default:fetch"
    result = asyncio.run(fetch.execute({"url": "v"}))
    assert (result.is_error, result.content) == (False, "v:default:fetch")


def test_execute_passes_the_context_runtime_and_reports_bad_arguments(
    default_rt: StandInRuntime,
) -> None:
    @agentic_function(register_globally=False)
    def echo(text: str, runtime: Any, ctx: ToolContext) -> str:
        """Echo."""
        return f"{text}:{runtime.label}:{ctx.call_id}"

    ctx = ToolContext(call_id="c1", tool_name="echo", runtime=StandInRuntime("loop"))
    assert asyncio.run(echo.execute({"text": "hi"}, ctx)).content == "hi:loop:c1"
    bad = asyncio.run(echo.execute({"text": 1}))
    assert bad.is_error
    assert "text: expected string" in bad.content


def test_agentic_methods_bind_and_hide_self(default_rt: StandInRuntime, reg: Registry) -> None:
    class Planner:
        def __init__(self, tone: str) -> None:
            self.tone = tone

        @agentic_function(registry=reg)
        def plan(self, city: str, runtime: Any) -> str:
            """Plan."""
            return f"{self.tone} {city} {runtime.label}"

        @agentic_function(registry=reg)
        async def aplan(self, city: str) -> str:
            """Plan asynchronously."""
            return f"{self.tone} {city}"

    assert len(reg) == 0  # a method needs an instance: nothing to register yet
    p = Planner("calm")
    assert p.plan("Rome") == "calm Rome default"
    assert p.plan is p.plan  # the bound copy is cached on the instance
    assert list(p.plan.spec["parameters"]["properties"]) == ["city"]
    assert asyncio.run(p.plan.execute({"city": "Oslo"})).content == "calm Oslo default"
    assert asyncio.run(p.aplan("Rome")) == "calm Rome"
    assert asyncio.run(p.aplan.execute({"city": "Oslo"})).content == "calm Oslo"
    assert Planner.plan is Planner.__dict__["plan"]
    assert to_tool(p.plan).name == "plan"


def test_methods_on_slotted_classes_bind_on_each_access(default_rt: StandInRuntime) -> None:
    class Slotted:
        __slots__ = ()

        @agentic_function(register_globally=False)
        def hello(self, name: str) -> str:
            """Hello."""
            return f"hi {name}"

    s = Slotted()
    assert s.hello("x") == "hi x"
    assert asyncio.run(s.hello.execute({"name": "y"})).content == "hi y"


def test_input_option_shapes_the_agentic_schema(reg: Registry) -> None:
    @agentic_function(
        registry=reg,
        input={
            "tone": {"options": ["calm", "loud"], "description": "Voice."},
            "debug": {"hidden": True},
        },
    )
    def speak(text: str, tone: str = "calm", debug: bool = False) -> str:
        """Speak."""
        return f"{tone}:{text}:{debug}"

    props = speak.spec["parameters"]["properties"]
    assert props["tone"] == {
        "description": "Voice.",
        "type": "string",
        "enum": ["calm", "loud"],
        "default": "calm",
    }
    assert "debug" not in props
    bad = asyncio.run(speak.execute({"text": "t", "tone": "shrill"}))
    assert bad.is_error
    assert "tone: expected one of 'calm', 'loud'" in bad.content


def test_as_tool_false_is_never_offered_nor_registered(reg: Registry) -> None:
    @agentic_function(registry=reg, as_tool=False)
    def helper(x: int) -> int:
        """Helper."""
        return x

    assert helper(3) == 3
    assert helper.tool.expose is False
    assert len(reg) == 0
    with pytest.raises(UserError, match="contradict"):
        agentic_function(as_tool=False, expose=True)(helper)


def test_system_must_be_a_string() -> None:
    with pytest.raises(UserError, match="system= must be a string"):
        agentic_function(system=3, register_globally=False)(lambda: None)  # type: ignore[arg-type]  # checked first
