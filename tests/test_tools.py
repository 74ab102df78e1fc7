"""``Tool``: construction, spec, execute (never raises), direct calls, coercion of tool-likes."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Iterator
from typing import Any, ClassVar

import pytest
from pydantic import BaseModel

from openprogram.context import set_default_runtime
from openprogram.decorators import agentic_function, function
from openprogram.exceptions import ToolError, UserError
from openprogram.tools import (
    Tool,
    ToolContext,
    ToolResult,
    result_text,
    to_tool,
    to_tools,
    truncate,
)


def run(coro: Any) -> Any:
    return asyncio.run(coro)


def add(a: int, b: int) -> int:
    """Add two integers.

    Args:
        a: First addend.
        b: Second addend.
    """
    return a + b


@pytest.fixture
def default_rt() -> Iterator[object]:
    rt = object()
    set_default_runtime(rt)
    yield rt
    set_default_runtime(None)


# -- construction -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"name": "bad name", "fn": add}, "invalid tool name 'bad name'"),
        ({"name": "", "fn": add}, "invalid tool name ''"),
        ({"name": "x" * 65, "fn": add}, "invalid tool name"),
        ({"name": "idle"}, "has nothing to run"),
        ({"name": "t", "fn": add, "timeout": 0}, "timeout must be > 0"),
        ({"name": "t", "fn": add, "max_result_chars": 10}, "max_result_chars must be >= 200"),
    ],
)
def test_bad_construction_is_a_clear_user_error(kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(UserError, match=message):
        Tool(**kwargs)


def test_tool_name_pattern_accepts_what_providers_accept() -> None:
    assert Tool(name="a-b_C9" + "x" * 58, execute=lambda args: None).name.startswith("a-b_C9")


def test_spec_of_a_function_tool_is_derived_lazily() -> None:
    tool = Tool.from_function(add)
    assert tool.spec == {
        "name": "add",
        "description": "Add two integers.",
        "parameters": {
            "type": "object",
            "properties": {
                "a": {"description": "First addend.", "type": "integer"},
                "b": {"description": "Second addend.", "type": "integer"},
            },
            "required": ["a", "b"],
            "additionalProperties": False,
        },
    }
    assert tool.one_liner == "add: Add two integers."
    assert tool.kind == "function"
    assert tool.origin is not None
    assert tool.origin.endswith("add")


def test_execute_tool_without_parameters_gets_an_empty_object_schema() -> None:
    tool = Tool(name="ping", execute=lambda args: "pong")
    assert tool.parameters == {"type": "object", "properties": {}, "additionalProperties": False}
    assert tool.description == "ping"


# -- execute ------------------------------------------------------------------------------------


def test_execute_runs_a_sync_body_off_the_calling_thread() -> None:
    seen: list[str] = []

    def where(x: int) -> int:
        """Record the thread."""
        seen.append(threading.current_thread().name)
        return x * 2

    result = run(Tool.from_function(where).execute({"x": 21}))
    assert (result.content, result.value, result.is_error) == ("42", 42, False)
    assert seen
    assert seen[0] != threading.main_thread().name


def test_execute_awaits_an_async_body() -> None:
    async def slow_add(a: int, b: int) -> int:
        """Add later."""
        await asyncio.sleep(0)
        return a + b

    assert run(Tool.from_function(slow_add).execute({"a": 1, "b": 2})).content == "3"


def test_invalid_arguments_list_every_violation() -> None:
    result = run(Tool.from_function(add).execute({"a": "one", "c": 3}))
    assert result.is_error
    assert result.error_kind == "invalid_arguments"
    assert result.violations == (
        "a: expected integer",
        "b: missing required argument",
        "c: unexpected argument (allowed: a, b)",
    )
    assert result.content == (
        "Invalid arguments for tool 'add':\n"
        "- a: expected integer\n"
        "- b: missing required argument\n"
        "- c: unexpected argument (allowed: a, b)\n"
        "Call 'add' again with arguments that match its parameters schema."
    )


def test_non_object_arguments_are_an_error_result() -> None:
    result = run(Tool.from_function(add).execute([1, 2]))  # type: ignore[arg-type]
    assert result.is_error
    assert result.violations[0].startswith("(root): expected a JSON object")


def test_exceptions_become_error_results_with_type_and_message() -> None:
    def boom() -> None:
        """Fail."""
        raise ValueError("bad input")

    result = run(Tool.from_function(boom).execute({}))
    assert (result.is_error, result.error_kind) == (True, "exception")
    assert result.content == "Tool 'boom' failed: ValueError: bad input"


def test_tool_error_text_goes_to_the_model_verbatim() -> None:
    def refuse() -> None:
        """Refuse."""
        raise ToolError("City not found; try a larger city nearby.")

    result = run(Tool.from_function(refuse).execute({}))
    assert (result.content, result.error_kind) == (
        "City not found; try a larger city nearby.",
        "tool_error",
    )


def test_timeouts_become_error_results_and_set_cancel() -> None:
    def sleepy() -> str:
        """Sleep."""
        time.sleep(0.3)
        return "late"

    async def asleep() -> str:
        """Sleep asynchronously."""
        await asyncio.sleep(5)
        return "late"

    for fn in (sleepy, asleep):
        ctx = ToolContext(tool_name=fn.__name__)
        started = time.monotonic()
        result = run(Tool.from_function(fn, timeout=0.05).execute({}, ctx))
        assert time.monotonic() - started < 0.29
        assert (result.is_error, result.error_kind) == (True, "timeout")
        assert "timed out after 0.05 s" in result.content
        assert ctx.cancel.is_set()


def test_a_body_raising_timeout_error_without_a_timeout_is_an_error_result() -> None:
    def upstream() -> None:
        """Call an upstream service that times out on its own."""
        raise TimeoutError("upstream took too long")

    result = run(Tool.from_function(upstream).execute({}))
    assert result.is_error
    assert "TimeoutError: upstream took too long" in result.content


def test_results_are_rendered_as_text_and_truncated() -> None:
    class Reply(BaseModel):
        ok: bool

    assert result_text("s") == "s"
    assert result_text(None) == ""
    assert result_text({"a": [1, 2]}) == '{"a":[1,2]}'
    assert result_text(Reply(ok=True)) == '{"ok":true}'
    assert result_text(object) == "\"<class 'object'>\""  # no JSON form: its str, as JSON

    def big() -> str:
        """Big."""
        return "x" * 1000 + "END"

    result = run(Tool.from_function(big, max_result_chars=300).execute({}))
    assert len(result.content) <= 300
    assert result.content.endswith("END")
    assert "truncated" in result.content
    assert len(result.value) == 1003


def test_truncate_keeps_head_and_tail() -> None:
    assert truncate("short", 200) == "short"
    text = "H" * 500 + "T" * 500
    out = truncate(text, 300)
    assert len(out) <= 300
    assert out.startswith("H")
    assert out.endswith("T")
    assert "[... truncated" in out


def test_tool_context_is_injected_and_hidden() -> None:
    reports: list[str] = []

    def work(job: str, ctx: ToolContext) -> str:
        """Work."""
        ctx.report(f"working on {job}")
        return f"{ctx.call_id}:{ctx.tool_name}:{ctx.deps}"

    tool = Tool.from_function(work)
    assert list(tool.parameters["properties"]) == ["job"]
    ctx = ToolContext(call_id="c7", tool_name="work", deps="D", on_report=reports.append)
    assert run(tool.execute({"job": "j"}, ctx)).content == "c7:work:D"
    assert reports == ["working on j"]


def test_runtime_parameter_is_filled_on_execute_and_direct_calls(default_rt: object) -> None:
    def which(runtime: Any, x: int = 0) -> bool:
        """Which runtime."""
        return runtime is default_rt

    tool = Tool.from_function(which)
    assert "runtime" not in tool.parameters["properties"]
    assert run(tool.execute({})).value is True
    assert tool() is True
    assert tool(None) is True
    assert tool("explicit") is False
    other = object()
    assert run(tool.execute({}, ToolContext(runtime=other))).value is False


def test_direct_calls_are_plain_python_calls() -> None:
    tool = Tool.from_function(add)
    assert tool(1, 2) == tool(a=1, b=2) == 3
    with pytest.raises(TypeError):
        tool(1)
    with pytest.raises(TypeError, match="wraps no Python function"):
        Tool(name="ping", execute=lambda args: "pong")()


def test_result_cache_reuses_successes_only() -> None:
    calls: list[int] = []

    def count(n: int) -> int:
        """Count calls."""
        calls.append(n)
        if n < 0:
            raise ValueError("negative")
        return n

    tool = Tool.from_function(count, cache=True, cache_ttl=0.05)
    run(tool.execute({"n": 1}))
    run(tool.execute({"n": 1}))
    run(tool.execute({"n": -1}))
    run(tool.execute({"n": -1}))
    assert calls == [1, -1, -1]
    time.sleep(0.06)
    run(tool.execute({"n": 1}))
    assert calls == [1, -1, -1, 1]


# -- hand-written specs ---------------------------------------------------------------------------

SPEC = {
    "name": "lookup",
    "description": "Look up a word.",
    "parameters": {
        "type": "object",
        "properties": {"word": {"type": "string"}},
        "required": ["word"],
    },
}


def test_dict_spec_with_sync_execute() -> None:
    tool = to_tool({"spec": SPEC, "execute": lambda args: args["word"].upper()})
    assert tool.spec == SPEC
    assert run(tool.execute({"word": "hi"})).content == "HI"
    bad = run(tool.execute({"word": 1}))
    assert bad.is_error
    assert bad.violations == ("word: expected string",)


def test_object_with_async_execute_taking_the_context() -> None:
    class Lookup:
        spec: ClassVar[dict[str, Any]] = {
            **SPEC,
            "parameters": None,
            "input_schema": SPEC["parameters"],
        }

        async def execute(self, args: dict[str, Any], context: ToolContext) -> ToolResult:
            return ToolResult(content=f"{args['word']}@{context.call_id}", is_error=False)

    tool = to_tool(Lookup())
    assert tool.parameters == SPEC["parameters"]
    assert run(tool.execute({"word": "w"}, ToolContext(call_id="c1"))).content == "w@c1"


def test_sync_execute_returning_an_awaitable_is_awaited() -> None:
    async def later(word: str) -> str:
        return word * 2

    tool = to_tool({"spec": SPEC, "execute": lambda args: later(args["word"])})
    assert run(tool.execute({"word": "ab"})).content == "abab"


def test_invalid_hand_written_schema_is_an_error_result() -> None:
    tool = to_tool(
        {"spec": {"name": "odd", "parameters": {"type": "objekt"}}, "execute": lambda a: 1}
    )
    result = run(tool.execute({}))
    assert result.is_error
    assert "invalid JSON Schema" in result.content


# -- coercion -----------------------------------------------------------------------------------


def test_coercion_of_every_tool_like_form() -> None:
    tool = Tool.from_function(add)
    decorated = function(add, name="add_decorated", register_globally=False)

    @agentic_function(register_globally=False)
    def agent(task: str) -> str:
        """An agent."""
        return task

    class Spec:
        spec = SPEC

        def execute(self, args: dict[str, Any]) -> str:
            return "ok"

    def plain(x: int) -> int:
        """Plain."""
        return x

    tools = to_tools([tool, decorated, agent, plain, {"spec": SPEC, "execute": print}, Spec()])
    assert [t.name for t in tools] == ["add", "add_decorated", "agent", "plain", "lookup", "lookup"]
    assert tools[0] is tool
    assert tools[1] is decorated
    assert tools[2] is agent.tool
    assert to_tool(plain) is tools[3]  # derived once, then cached


@pytest.mark.parametrize(
    ("bad", "message"),
    [
        (42, r"tools\[1\] \(42\) is not a tool"),
        ("add", r"tools\[1\] \('add'\) is not a tool"),
        (Tool, r"tools\[1\] .* is not a tool"),
        ({"spec": "x", "execute": print}, r"tools\[1\].*: spec must be a dict"),
        ({"spec": SPEC, "execute": 3}, r"tools\[1\].*: execute must be callable"),
    ],
)
def test_coercion_errors_name_the_entry(bad: Any, message: str) -> None:
    with pytest.raises(TypeError, match=message):
        to_tools([add, bad])


def test_tools_must_be_a_list() -> None:
    with pytest.raises(TypeError, match="tools= must be a list"):
        to_tools("add")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="tools= must be a list"):
        to_tools({"spec": SPEC, "execute": print})  # type: ignore[arg-type]


def test_unnamed_callables_need_a_name() -> None:
    with pytest.raises(UserError, match="invalid tool name '<lambda>'"):
        to_tool(lambda x: x)
