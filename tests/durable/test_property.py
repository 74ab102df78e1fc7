"""Property: for random nested programs, a run crashed at a random step and run again gives the
same output and the same tool effects as an uninterrupted run.

A program is a tree of execs: each exec makes a few model turns of parallel
calls (sync and async tools, sync and async agentic functions whose bodies
exec again), then answers in text, with ``response_format=`` or with
``choices=``. The fake model follows the program; tool results and answers
are functions of the calls. A crash is a ``BaseException`` raised at the
N-th step of the attempt (a model call or a tool body), which nothing in the
run catches, like a process dying; the run then goes on with its run id
(run again, or ``runtime.resume``), up to two crashes. Tools here are
idempotent (their effect is a write of a value to a key: doing it twice is
doing it once); ``side_effect`` calls are covered by the kill test and
``test_effects``.
"""

from __future__ import annotations

import asyncio
import threading
from dataclasses import dataclass
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import BaseModel

from openprogram import Runtime, agentic_function, function
from openprogram.messages import AssistantMessage, ToolResultMessage
from openprogram.providers.base import ProviderRequest
from openprogram.stores import MemoryStore
from openprogram.testing import FunctionProvider, call

FINALES = ("text", "format", "pick")


@dataclass(frozen=True)
class Call:
    tool: str
    key: str
    value: int
    inner: str = ""


@dataclass(frozen=True)
class Exec:
    turns: tuple[tuple[Call, ...], ...]
    finale: str


class Summary(BaseModel):
    """A structured answer."""

    summary: str


@dataclass(frozen=True)
class Verdict:
    """What the picked option returns."""

    summary: str
    count: int


def conclude(summary: str) -> Verdict:
    """Conclude with a summary.

    Args:
        summary: What was done.
    """
    return Verdict(summary=summary, count=len(summary))


PROGRAM: dict[str, Exec] = {}
EFFECTS: dict[str, int] = {}
CRASH = {"at": 0, "steps": 0}
DONE: list[tuple[str, str]] = []
"""Every step started in the current attempt, by its journal key: (key, kind)."""
_lock = threading.Lock()


def exec_path(spec: str) -> str:
    """The journal key of the exec of ``spec`` (``"root.0.1"`` is ``"1.1/0"``)."""
    parts = spec.split(".")[1:]
    return "/".join(f"{int(t) + 1}.{k}/0" for t, k in zip(parts[::2], parts[1::2], strict=True))


def key_in(spec: str, *numbers: str) -> str:
    base = exec_path(spec)
    return f"{base}/{'.'.join(numbers)}" if base else ".".join(numbers)


class Crash(BaseException):
    """The process dies here (nothing in the run catches a BaseException)."""


def step(key: str, kind: str) -> None:
    with _lock:
        DONE.append((key, kind))
        CRASH["steps"] += 1
        due = CRASH["steps"] == CRASH["at"]
    if due:
        raise Crash


def _effect(key: str, value: int) -> str:
    spec, turn, k = key.rsplit("/", 2)
    step(key_in(spec, str(int(turn) + 1), k), "result")
    with _lock:
        EFFECTS[key] = value
    return f"{key}={value}"


@function(register_globally=False)
def note(key: str, value: int) -> str:
    """Write a value (sync).

    Args:
        key: Where.
        value: What.
    """
    return _effect(key, value)


@function(register_globally=False)
async def note_async(key: str, value: int) -> str:
    """Write a value (async).

    Args:
        key: Where.
        value: What.
    """
    return _effect(key, value)


def _inner_options(spec: str) -> dict[str, Any]:
    finale = PROGRAM[spec].finale
    if finale == "format":
        return {"response_format": Summary}
    if finale == "pick":
        return {"choices": [conclude]}
    return {}


def _answer(value: Any) -> str:
    return value if isinstance(value, str) else repr(value)


@agentic_function(register_globally=False)
def agent(spec: str, runtime: Runtime) -> str:
    """Delegate a part (sync body).

    Args:
        spec: The part.
    """
    return _answer(runtime.exec(f"exec {spec}", tools=TOOLS, **_inner_options(spec)))


@agentic_function(register_globally=False)
async def agent_async(spec: str, runtime: Runtime) -> str:
    """Delegate a part (async body).

    Args:
        spec: The part.
    """
    return _answer(await runtime.async_exec(f"exec {spec}", tools=TOOLS, **_inner_options(spec)))


TOOLS = [note, note_async, agent, agent_async]


def model(request: ProviderRequest) -> Any:
    """Follows the program: the exec's turns, then its answer."""
    spec = request.messages[0].text.split()[1]
    program = PROGRAM[spec]
    turn = sum(isinstance(m, AssistantMessage) for m in request.messages)
    step(key_in(spec, str(turn + 1)), "reply")
    if turn < len(program.turns):
        return [
            call(c.tool, spec=c.inner) if c.inner else call(c.tool, key=c.key, value=c.value)
            for c in program.turns[turn]
        ]
    said = "|".join(m.content for m in request.messages if isinstance(m, ToolResultMessage))
    if program.finale == "format":
        return Summary(summary=f"{spec}:{said}").model_dump_json()
    if program.finale == "pick":
        return f'{{"call": "conclude", "args": {{"summary": "{spec}:{len(said)}"}}}}'
    return f"{spec} done: {said}"


@st.composite
def programs(draw: st.DrawFn, spec: str = "root", depth: int = 0) -> dict[str, Exec]:
    """A program: the exec ``spec`` and every exec nested in it."""
    found: dict[str, Exec] = {}
    turns = []
    for t in range(draw(st.integers(0, 2))):
        calls = []
        for k in range(draw(st.integers(1, 3))):
            kinds = ["note", "note_async"] + (["agent", "agent_async"] if depth < 2 else [])
            tool = draw(st.sampled_from(kinds))
            inner = f"{spec}.{t}.{k}" if tool.startswith("agent") else ""
            if inner:
                found.update(draw(programs(inner, depth + 1)))
            calls.append(
                Call(tool=tool, key=f"{spec}/{t}/{k}", value=draw(st.integers(0, 9)), inner=inner)
            )
        turns.append(tuple(calls))
    found[spec] = Exec(turns=tuple(turns), finale=draw(st.sampled_from(FINALES)))
    return found


def run(store: Any, run_id: str, crash_at: int, resume: bool) -> Any:
    CRASH["at"], CRASH["steps"] = crash_at, 0
    runtime = Runtime(FunctionProvider(model), store=store)
    options = _inner_options("root")
    if resume:
        return _answer(runtime.resume(run_id, tools=TOOLS))
    return _answer(runtime.exec("exec root", tools=TOOLS, run_id=run_id, **options))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    program=programs(),
    crashes=st.lists(st.integers(1, 30), min_size=1, max_size=2),
    resume=st.booleans(),
)
def test_a_crashed_run_run_again_ends_as_an_uninterrupted_one(
    program: dict[str, Exec], crashes: list[int], resume: bool
) -> None:
    PROGRAM.clear()
    PROGRAM.update(program)
    EFFECTS.clear()
    expected = run(MemoryStore(), "whole", 0, resume=False)
    expected_effects = dict(EFFECTS)

    EFFECTS.clear()
    store = MemoryStore()
    output: Any = None
    for attempt, crash_at in enumerate([*crashes, 0]):
        stored = asyncio.run(store.load_run("crashed"))
        journaled = {(s.key, s.kind) for s in stored.steps} if stored is not None else set()
        DONE.clear()
        try:
            output = run(store, "crashed", crash_at, resume=resume and attempt > 0)
            break
        except Crash:
            continue
        finally:
            assert journaled.isdisjoint(DONE)  # nothing the journal held ran again
    assert output == expected
    assert expected_effects == EFFECTS
