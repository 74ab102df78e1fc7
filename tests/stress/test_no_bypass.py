"""No call runs what the gates or the approval hook refuse, by any path, in any tool form.

Every combination of tool form (``_paths.target_forms`` plus a lazy registry
card) and path (``_paths.PATHS``: single calls, parallel and sequential
batches, async exec, streaming, three kinds of nested exec, ``run_tools``) is
run twice: refused, the target never runs and its call is answered with an
error; allowed (the control), it runs exactly once, which proves the path
really reaches the tool.
"""

from __future__ import annotations

from typing import Any

import pytest

from openprogram import DecisionError, Registry, Runtime, Tool, ToolCall, function
from openprogram.testing import FunctionProvider, ScriptedProvider, call

from ._paths import (
    PATHS,
    TARGET,
    Conversations,
    Setup,
    ok_tool,
    target_forms,
)
from ._zoo import JOURNAL


def _combos(forms: list[str]) -> list[tuple[str, str]]:
    # run_tools takes tool objects, so a lazy card (which lives in a registry) has no hosted path.
    return [(f, p) for f in forms for p in sorted(PATHS) if (f, p) != ("lazy", "hosted")]


GATE_CASES = _combos([*sorted(target_forms()), "lazy"])
APPROVAL_CASES = _combos([*sorted(target_forms(requires_approval=True)), "lazy"])


def _target(form: str, registry: Registry, **options: Any) -> Any:
    if form != "lazy":
        return target_forms(**options)[form]
    attr = "LAZY_TARGET_APPROVAL" if options.get("requires_approval") else "LAZY_TARGET"
    registry.lazy(TARGET, f"stress._paths:{attr}", description="The tool under test.")
    return None  # the exec finds it in the registry


@pytest.mark.parametrize("vetoed", [True, False], ids=["denied", "control"])
@pytest.mark.parametrize(("form", "path"), GATE_CASES)
def test_a_denied_tool_never_runs_whatever_its_form_and_path(
    form: str, path: str, vetoed: bool
) -> None:
    JOURNAL.clear()
    registry = Registry()
    setup = Setup(_target(form, registry), deny=[TARGET] if vetoed else [], registry=registry)
    results = PATHS[path](setup)
    assert len(results) == 1
    if vetoed:
        assert JOURNAL.names() == []
        assert results[0].is_error
        assert "not available" in results[0].content
    else:
        assert JOURNAL.names() == [TARGET]
        assert not results[0].is_error
        assert results[0].content == "TARGET RAN"


def _hooks(kind: str, consulted: list[str]) -> Any:
    def denies(c: ToolCall) -> str | None:
        consulted.append(c.name)
        return "not this one" if c.name == TARGET else None

    def raises(c: ToolCall) -> str | None:
        consulted.append(c.name)
        if c.name == TARGET:
            raise RuntimeError("hook broke")
        return None

    def allows(c: ToolCall) -> None:
        consulted.append(c.name)

    return {"denies": denies, "raises": raises, "none": None, "allows": allows}[kind]


@pytest.mark.parametrize("hook", ["denies", "raises", "none", "allows"])
@pytest.mark.parametrize(("form", "path"), APPROVAL_CASES)
def test_approval_is_never_skipped_whatever_the_form_and_path(
    form: str, path: str, hook: str
) -> None:
    JOURNAL.clear()
    consulted: list[str] = []
    registry = Registry()
    target = _target(form, registry, requires_approval=True)
    setup = Setup(target, approval=_hooks(hook, consulted), registry=registry)
    results = PATHS[path](setup)
    assert len(results) == 1
    # Another runtime without a hook runs the inner exec there: fail closed.
    allowed = hook == "allows" and path != "nested_other_runtime"
    if allowed:
        assert JOURNAL.names() == [TARGET]
        assert not results[0].is_error
    else:
        assert JOURNAL.names() == []
        assert results[0].is_error
        assert "denied" in results[0].content
    if hook != "none" and path != "nested_other_runtime":
        assert TARGET in consulted


def test_a_registered_tool_outside_the_menu_never_runs() -> None:
    JOURNAL.clear()
    registry = Registry()
    registry.register(target_forms()["function"])
    rt = Runtime(ScriptedProvider([call(TARGET), "done"]), registry=registry)
    assert rt.exec("go", tools=[ok_tool]) == "done"
    assert JOURNAL.names() == []


def test_a_deferred_tool_does_not_run_before_it_is_loaded_and_keeps_its_approval() -> None:
    JOURNAL.clear()
    consulted: list[str] = []
    deferred = Tool.from_function(
        target_forms()["plain"], defer=True, requires_approval=True, name=TARGET
    )
    script = [
        call(TARGET),  # not loaded yet: refused
        call("tool_search", query=f"select:{TARGET}"),
        call(TARGET),  # loaded: still needs approval
        "done",
    ]
    rt = Runtime(ScriptedProvider(script), approval=_hooks("denies", consulted))
    assert rt.exec("go", tools=[deferred]) == "done"
    assert rt.last_run is not None
    results = [m for m in rt.last_run.messages if getattr(m, "tool_name", None) == TARGET]
    assert "deferred and not loaded" in results[0].content
    assert "denied" in results[1].content
    assert JOURNAL.names() == []
    assert consulted.count(TARGET) == 1


def test_a_cached_result_is_not_a_way_around_approval() -> None:
    JOURNAL.clear()
    verdicts = iter([None, "changed my mind"])
    cached = Tool.from_function(
        target_forms()["plain"], name=TARGET, cache=True, requires_approval=True
    )
    script = [call(TARGET, text="same"), call(TARGET, text="same"), "done"]
    rt = Runtime(ScriptedProvider(script), approval=lambda c: next(verdicts))
    rt.exec("go", tools=[cached])
    assert rt.last_run is not None
    results = [m for m in rt.last_run.messages if getattr(m, "tool_name", None) == TARGET]
    assert [r.is_error for r in results] == [False, True]
    assert "changed my mind" in results[1].content


@pytest.mark.parametrize("form", ["function", "agentic", "plain"])
@pytest.mark.parametrize("hook", ["denies", "none", "allows"])
def test_a_picked_choice_runs_only_if_approved(form: str, hook: str) -> None:
    JOURNAL.clear()
    consulted: list[str] = []
    options = {"requires_approval": True} if form != "plain" else {}
    picked = target_forms(**options)[form] if options else target_forms()[form]
    model = Conversations({"go": ['{"call": "target", "args": {"text": "x"}}']})
    rt = Runtime(FunctionProvider(model), approval=_hooks(hook, consulted))
    allowed = hook == "allows" or (hook == "none" and form == "plain")
    if allowed:
        assert rt.exec("go", choices=[picked, "nothing"]) == "TARGET RAN"
        assert JOURNAL.names() == [TARGET]
    else:
        with pytest.raises(DecisionError, match="denied"):
            rt.exec("go", choices=[picked, "nothing"])
        assert JOURNAL.names() == []
    assert consulted == ([TARGET] if hook != "none" else [])


def test_a_picked_choice_respects_deny_including_an_outer_execs() -> None:
    JOURNAL.clear()
    picked = target_forms()["function"]

    @function(register_globally=False)
    def decide() -> str:
        """Make a decision in a nested exec."""
        from openprogram import get_current_runtime

        return str(get_current_runtime().exec("inner", choices=[picked, "nothing"]))

    model = Conversations({"go": [call("decide"), "done"], "inner": ['{"call": "target"}']})
    rt = Runtime(FunctionProvider(model))
    assert rt.exec("go", tools=[decide], tools_deny=[TARGET]) == "done"
    assert rt.last_run is not None
    assert "not allowed to run" in str(rt.last_run.messages[2])
    assert JOURNAL.names() == []
    with pytest.raises(DecisionError, match="deny list"):
        Runtime(FunctionProvider(model)).exec("inner", choices=[picked], tools_deny=[TARGET])
