"""Laws 7 and 8 of docs/gates.md through the runtime, with the public strategies.

Law 7: an inner exec inherits the outer vetoes (deny, allow cap, source) and
its own arguments only narrow. Law 8: a call for a name outside the current
menu is answered with an error and never executed, even if it is registered.
An outer exec calls an agentic function whose body runs an inner exec; the
model is a ``FunctionProvider`` that records each exec's menu.

Every law is checked on each path an inner exec can take: run in the body
itself, or on a thread the body starts (with the injected runtime, or with
the outer runtime the body captured: the thread carries the call's frame);
and a function picked through ``choices=`` runs only if the
same vetoes let it (``test_law7_a_picked_choice_obeys_every_veto``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from gates_reference import _holds
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from openprogram.decorators import agentic_function
from openprogram.gates import GateContext
from openprogram.messages import ToolResultMessage, UserMessage
from openprogram.providers.base import ProviderRequest
from openprogram.registry import Registry
from openprogram.runtime import Runtime
from openprogram.testing import FunctionProvider, call
from openprogram.testing.strategies import (
    DEFAULT_NAMES,
    DEFAULT_SOURCES,
    SourceIn,
    can_use_predicates,
    tool_lists,
)
from openprogram.tools import Tool

NESTED = settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
AGENT = "agent"
SEARCH = "tool_search"

_source = st.sampled_from([None, *DEFAULT_SOURCES])
_via = st.sampled_from(["body", "thread", "captured"])
"""Where the agentic function runs its inner exec: in its body, or on a thread it starts,
with the runtime it was given or (``"captured"``) with the outer runtime it closes over."""


def _some(names: Sequence[str]) -> st.SearchStrategy[list[str]]:
    return st.lists(st.sampled_from(sorted(names)), unique=True) if names else st.just([])


@dataclass
class Exec:
    """The arguments of one exec and the calls its model makes on the first turn."""

    source: str | None = None
    allow: list[str] | None = None
    deny: list[str] = field(default_factory=list)
    tools: list[str] | None = None
    calls: list[str] = field(default_factory=list)
    via: str = "body"
    pick: str | None = None
    """With a name: the inner exec offers every tool as a ``choices=`` option and this is picked."""


@st.composite
def _outer(draw: st.DrawFn, names: Sequence[str]) -> Exec:
    # Lists drawn from the drawn tools' own names, so vetoes and explicit lists overlap often.
    return Exec(
        source=draw(_source),
        allow=draw(st.none() | _some(names)),
        deny=draw(_some(names)),
        calls=draw(_some(DEFAULT_NAMES)),
    )


@st.composite
def _inner(draw: st.DrawFn, names: Sequence[str]) -> Exec:
    # Mostly no narrowing of its own and every tool listed: what it inherits then decides.
    everything = st.just(list(names))
    return Exec(
        source=draw(_source),
        allow=draw(st.one_of(st.none(), st.none(), _some(names))),
        deny=draw(st.one_of(st.just([]), _some(names))),
        tools=draw(st.one_of(st.none(), everything, everything, _some(names))),
        calls=draw(_some(DEFAULT_NAMES)),
        via=draw(_via),
    )


@dataclass
class Outcome:
    tools: dict[str, Tool]
    outer_menu: set[str]
    inner_menu: set[str]
    outer_ran: set[str]
    inner_ran: set[str]
    results: list[ToolResultMessage]


def _recording(tool: Tool, log: list[str], **overrides: Any) -> Tool:
    """The same gate metadata, with a body that logs its name when (and only when) it runs."""

    def run(args: Any) -> str:
        log.append(tool.name)
        return "ran"

    fields = ("expose", "toolset", "unsafe_in", "requires_env", "check_fn", "can_use", "defer")
    metadata = {f: getattr(tool, f) for f in fields} | overrides
    return Tool(name=tool.name, description=tool.description, execute=run, **metadata)


def _run(drawn: list[Tool], outer: Exec, inner: Exec, **overrides: Any) -> Outcome:
    log: list[str] = []
    tools = {t.name: _recording(t, log, **overrides) for t in drawn}
    registry = Registry()
    for tool in tools.values():
        registry.register(tool)
    menus: dict[str, set[str]] = {}

    @agentic_function(registry=registry)
    def agent(runtime: Runtime) -> str:
        """Run an inner loop."""
        log.append(AGENT)
        chosen = rt if inner.via == "captured" else runtime  # rt: the outer runtime, below
        return _on(inner.via, lambda: str(_inner_exec(chosen, inner, tools)))

    def reply(request: ProviderRequest) -> Any:
        first = request.messages[0]
        assert isinstance(first, UserMessage)
        key = first.text.split("\n", 1)[0]  # choices= adds its menu text below the prompt
        if key in menus:
            return "done"
        menus[key] = {spec["name"] for spec in request.tools} - {SEARCH}
        if key == "outer":
            return [call(n) for n in outer.calls] + [call(AGENT)]
        if inner.pick is not None:
            return f'{{"call": "{inner.pick}"}}'
        return [call(n) for n in inner.calls] if inner.calls else "done"

    rt = Runtime(FunctionProvider(reply), registry=registry)
    rt.exec(
        "outer",
        tools_source=outer.source,
        tools_allow=None if outer.allow is None else [*outer.allow, AGENT],
        tools_deny=outer.deny,
        parallel_tool_calls=False,  # outer calls run before the agent: the log splits cleanly
    )
    assert "inner" in menus, "the agent ran its inner exec"
    split = log.index(AGENT)
    messages = rt.last_run.messages if rt.last_run is not None else ()
    return Outcome(
        tools=tools,
        outer_menu=menus["outer"],
        inner_menu=menus["inner"],
        outer_ran=set(log[:split]),
        inner_ran=set(log[split + 1 :]),
        results=[m for m in messages if isinstance(m, ToolResultMessage)],
    )


def _inner_exec(runtime: Runtime, inner: Exec, tools: dict[str, Tool]) -> Any:
    if inner.pick is not None:
        return runtime.exec(
            "inner",
            tools=[],
            choices=[*tools.values(), "nothing"],
            tools_source=inner.source,
            tools_allow=inner.allow,
            tools_deny=inner.deny,
        )
    listed = [tools[n] for n in inner.tools] if inner.tools is not None else None
    return runtime.exec(
        "inner",
        tools=listed,
        tools_source=inner.source,
        tools_allow=inner.allow,
        tools_deny=inner.deny,
    )


def _on(via: str, work: Callable[[], str]) -> str:
    if via == "body":
        return work()
    with ThreadPoolExecutor(1) as pool:  # a thread of the user's: no context is copied
        return pool.submit(work).result()


def _assert_law7(got: Outcome, outer: Exec, inner: Exec) -> None:
    menu = got.inner_menu
    for deny in (outer.deny, inner.deny):
        assert not menu & set(deny)
    if outer.allow is not None:
        assert menu <= {*outer.allow, AGENT}
    if inner.allow is not None:
        assert menu <= set(inner.allow)
    for name in menu - {AGENT}:
        unsafe = set(got.tools[name].unsafe_in)
        assert outer.source not in unsafe
        assert inner.source not in unsafe
    if inner.tools is None:
        deferred = {n for n, t in got.tools.items() if t.defer}
        assert menu <= got.outer_menu | deferred  # the inherited menu, never more
    else:
        assert menu <= set(inner.tools)


# Exposed, eager tools without predicates: every one of them is in play for the vetoes.
_in_play = tool_lists(predicates=False, env_vars=(), min_size=3)


@NESTED
@given(drawn=_in_play, data=st.data())
def test_law7_outer_vetoes_bind_an_explicit_inner_list(
    drawn: list[Tool], data: st.DataObject
) -> None:
    names = [t.name for t in drawn]
    outer = data.draw(_outer(names), label="outer")
    inner = Exec(source=data.draw(_source, label="inner source"), tools=names)
    got = _run(drawn, outer, inner, expose=True, defer=False)
    _assert_law7(got, outer, inner)


@NESTED
@given(drawn=_in_play, data=st.data())
def test_law7_inner_arguments_only_narrow(drawn: list[Tool], data: st.DataObject) -> None:
    names = [t.name for t in drawn]
    outer = data.draw(_outer(names), label="outer")
    inner = data.draw(_inner(names), label="inner")
    got = _run(drawn, outer, inner, expose=True, defer=False)
    _assert_law7(got, outer, inner)


@NESTED
@given(drawn=tool_lists(min_size=1), data=st.data())
def test_law8_no_call_bypasses_the_current_menu(drawn: list[Tool], data: st.DataObject) -> None:
    names = [t.name for t in drawn]
    outer = data.draw(_outer(names), label="outer")
    inner = data.draw(_inner(names), label="inner")
    got = _run(drawn, outer, inner)
    _assert_law7(got, outer, inner)
    assert got.outer_ran <= got.outer_menu
    assert got.inner_ran <= got.inner_menu
    for result in got.results:  # the outer run's results: a refused call is an error
        if result.tool_name not in got.outer_menu | {AGENT}:
            assert result.is_error, result


@NESTED
@given(drawn=tool_lists(predicates=False, env_vars=(), min_size=1), data=st.data())
def test_law7_a_picked_choice_obeys_every_veto(drawn: list[Tool], data: st.DataObject) -> None:
    names = [t.name for t in drawn]
    outer = data.draw(_outer(names), label="outer")
    inner = data.draw(_inner(names), label="inner")
    inner.pick = data.draw(st.sampled_from(names), label="pick")
    got = _run(drawn, outer, inner, defer=False)
    tool = got.tools[inner.pick]
    allowed = (
        tool.expose
        and inner.pick not in {*outer.deny, *inner.deny}
        and (outer.allow is None or inner.pick in outer.allow)
        and (inner.allow is None or inner.pick in inner.allow)
        and not {outer.source, inner.source} & set(tool.unsafe_in)
    )
    assert got.inner_ran == ({inner.pick} if allowed else set())


# -- can_use sees every source: an inner exec that relabels its source gains nothing ----------


def _trail_context(outer: Exec, inner: Exec) -> GateContext:
    """What ``can_use`` sees in the inner exec: its own source, and every one it came through."""
    trail = tuple(s for s in (outer.source, inner.source) if s is not None)
    return GateContext(source=inner.source or outer.source, sources=trail)


@NESTED
@given(drawn=_in_play, data=st.data())
def test_law7_can_use_sees_every_source_when_an_inner_exec_relabels_its_own(
    drawn: list[Tool], data: st.DataObject
) -> None:
    names = [t.name for t in drawn]
    # Mostly predicates over the whole trail: the ones a relabel could fool.
    trail_only = st.lists(st.sampled_from(DEFAULT_SOURCES), unique=True).map(
        lambda sources: SourceIn(sources, every=True)
    )
    predicate = st.one_of(can_use_predicates(DEFAULT_SOURCES, every=True), trail_only)
    gated = [
        Tool(
            name=t.name,
            description=t.description,
            execute=lambda args: "ran",
            unsafe_in=t.unsafe_in,
            can_use=data.draw(predicate, label=f"can_use of {t.name}"),
        )
        for t in drawn
    ]
    outer = Exec(source=data.draw(st.sampled_from(DEFAULT_SOURCES), label="outer source"))
    inner = Exec(
        source=data.draw(_source, label="inner source (a relabel)"),
        tools=names,
        calls=names,
        via=data.draw(_via, label="via"),
        pick=data.draw(st.none() | st.sampled_from(names), label="pick"),
    )
    got = _run(gated, outer, inner, expose=True, defer=False)
    ctx = _trail_context(outer, inner)
    allowed = {
        t.name for t in gated if _holds(t.can_use, ctx) and not set(ctx.sources) & set(t.unsafe_in)
    }
    if inner.pick is None:
        assert got.inner_menu == allowed
        assert got.inner_ran == allowed
    else:
        assert got.inner_ran == ({inner.pick} & allowed)
