"""What resume runs again: the root exec's content and options, from the run's record."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest
from pydantic import BaseModel

from openprogram import PAUSE, Budget, RunPaused, Runtime, UserError, function
from openprogram.messages import ToolCall, UserMessage
from openprogram.providers.base import ProviderRequest
from openprogram.testing import FunctionProvider


class Verdict(BaseModel):
    """A structured answer."""

    ok: bool


@dataclass
class Choice:
    """A value option."""

    label: str


@function(register_globally=False)
def approve_it(amount: int) -> Choice:
    """Approve an amount.

    Args:
        amount: Euros.
    """
    return Choice(label=f"approved {amount}")


def pause_every_pick(tool_call: ToolCall) -> Any:
    return PAUSE


def test_a_paused_exec_with_choices_and_options_is_resumed_as_it_was(store: Any) -> None:
    seen: list[ProviderRequest] = []

    def model(request: ProviderRequest) -> str:
        seen.append(request)
        return '{"call": "approve_it", "args": {"amount": 5}}'

    options: dict[str, Any] = {
        "choices": {
            "approve_it": approve_it,
            "refuse": ("Refuse it", {"type": "object", "properties": {}}),
            "later": ("wait", "Decide later"),
        },
        "max_iterations": 7,
        "temperature": 0.5,
        "budget": Budget(model_calls=9),
        "history": [UserMessage("Earlier: we agreed on 5 EUR.")],
        "tools_deny": ["rm"],
    }
    runtime = Runtime(FunctionProvider(model), store=store, approval=pause_every_pick)
    with pytest.raises(RunPaused):
        runtime.exec("Approve?", run_id="rec", **options)
    assert len(seen) == 1
    seen.clear()
    resumed = Runtime(FunctionProvider(model), store=store)
    assert resumed.resume("rec", approve=["decision:approve_it"]) == Choice(label="approved 5")
    assert seen == []  # the one turn replayed from the journal: nothing asked again
    assert resumed.last_run is not None
    assert resumed.last_run.messages[0] == UserMessage("Earlier: we agreed on 5 EUR.")


def test_a_response_format_by_reference_is_resumed(store: Any) -> None:
    def model(request: ProviderRequest) -> str:
        return '{"ok": true}'

    runtime = Runtime(FunctionProvider(model), store=store)
    assert runtime.exec("Ok?", run_id="fmt", response_format=Verdict) == Verdict(ok=True)
    assert runtime.resume("fmt") == Verdict(ok=True)


def test_what_has_no_importable_name_makes_resume_say_how_to_go_on(store: Any) -> None:
    class Local(BaseModel):
        ok: bool

    def model(request: ProviderRequest) -> str:
        return '{"ok": true}'

    runtime = Runtime(FunctionProvider(model), store=store)
    runtime.exec("Ok?", run_id="local", response_format=Local)
    with pytest.raises(UserError) as caught:
        runtime.resume("local")
    message = str(caught.value)
    assert "has no importable name (define it at module level)" in message
    assert "Run the same exec again with run_id='local'" in message
    # Which works: the journal replays it.
    assert runtime.exec("Ok?", run_id="local", response_format=Local) == Local(ok=True)


class Opaque:
    """A value pydantic cannot write."""


def opaque_pick():  # type: ignore[no-untyped-def]
    """Pick the opaque thing."""
    return Opaque()


def test_a_picked_value_a_store_cannot_keep_is_an_error_naming_the_function(store: Any) -> None:
    def model(request: ProviderRequest) -> str:
        return '{"call": "opaque_pick"}'

    runtime = Runtime(FunctionProvider(model), store=store)
    with pytest.raises(
        UserError, match=r"the picked function 'opaque_pick' returns what a durable"
    ):
        runtime.exec("Pick", choices=[opaque_pick], run_id="opaque")
    assert Runtime(FunctionProvider(model)).exec("Pick", choices=[opaque_pick]).__class__ is Opaque
