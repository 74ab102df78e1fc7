"""A model's quirks are data: its profile's values reach the wire, and its guards switch on and off.

The profiles table is swapped for one whose default model differs in one field,
and a scripted llama.cpp server on 127.0.0.1 shows what the provider then sends
and does.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, get_args

import pytest

from openprogram import Runtime, function
from openprogram.exceptions import LLMError
from openprogram.providers.local import (
    BODY_STEPS,
    LOCAL_MODEL,
    LOCAL_MODELS,
    PIPELINE,
    PROFILES,
    Guard,
    ModelProfile,
    _profile,
)
from openprogram.providers.local._profile import ALL_GUARDS
from openprogram.registry import Registry

from .._server import Reply, WireServer
from ._llama import completion, provider

# model_requests: fake llama.cpp servers on 127.0.0.1, talked to on purpose (tests/conftest.py)
pytestmark = [pytest.mark.usefixtures("clean_env"), pytest.mark.model_requests]

TOOLS = Registry()
CALL = '[{"name": "get_weather", "arguments": {"city": "Paris"}}]'
LOOP = "Here is the plan. " + "Paris: sunny, 21 C " * 200


@function(registry=TOOLS)
def get_weather(city: str) -> str:
    """Current weather for a city.

    Args:
        city: City name.
    """
    return f"{city}: sunny, 21 C"


def _default_model_as(monkeypatch: pytest.MonkeyPatch, **changes: Any) -> ModelProfile:
    profile = replace(PROFILES[LOCAL_MODEL], **changes)
    monkeypatch.setattr(_profile, "PROFILES", {**PROFILES, LOCAL_MODEL: profile})
    return profile


def _weather(wire: WireServer) -> list[dict[str, Any]]:
    """One call, its result, an answer: the request bodies sent."""
    wire.push(Reply(body=completion(CALL)))
    wire.push(Reply(body=completion("Sunny in Paris.")))
    assert (
        Runtime(provider(wire)).exec("Weather in Paris?", tools=[get_weather]) == "Sunny in Paris."
    )
    return [r.json for r in wire.requests]


def test_the_pipeline_names_every_guard_once_in_the_order_of_the_guard_type() -> None:
    assert [step.guard for step in PIPELINE] == list(get_args(Guard))
    assert {step.guard for step in PIPELINE} == ALL_GUARDS
    body = [guard for guard, _step in BODY_STEPS if guard is not None]
    assert body == [step.guard for step in PIPELINE if step.stage == "body" and step.guard in body]
    assert all(PROFILES[model].runs(guard) for model in PROFILES for guard in ALL_GUARDS)


def test_every_embedded_model_is_one_row_of_the_profiles_table() -> None:
    assert dict(LOCAL_MODELS) == {model: profile.weights for model, profile in PROFILES.items()}
    for model, profile in PROFILES.items():
        assert profile.model == model
        assert "<|im_start|>" in profile.chat_template()


def test_the_profiles_values_are_what_the_requests_carry(
    wire: WireServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    _default_model_as(monkeypatch, dry_multiplier=0.5, echo_stops=("Function results:",))
    first, second = _weather(wire)
    assert first["dry_multiplier"] == second["dry_multiplier"] == 0.5
    assert "stop" not in first
    assert second["stop"] == ["Function results:"]


def test_guards_switched_off_leave_their_fields_out(
    wire: WireServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    on = _weather(wire)
    wire.requests.clear()
    off = {"dry_sampler", "echo_stops", "grammar", "prompt_cache"}
    _default_model_as(monkeypatch, guards=ALL_GUARDS - off)
    without = _weather(wire)
    fields = ("dry_multiplier", "stop", "grammar", "cache_prompt")
    assert all(field in on[1] for field in fields)
    assert not any(field in body for body in without for field in fields)
    assert without[0]["chat_template_kwargs"] == on[0]["chat_template_kwargs"]  # the format stays


def test_a_loop_is_left_whole_without_the_loop_guard(
    wire: WireServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    wire.push(Reply(body=completion(LOOP)))
    assert Runtime(provider(wire)).exec("Plan a weekend.") == "Here is the plan. Paris: sunny, 21 C"
    _default_model_as(monkeypatch, guards=ALL_GUARDS - {"loop_stop"})
    wire.push(Reply(body=completion(LOOP)))
    assert Runtime(provider(wire)).exec("Plan a weekend.") == LOOP


@pytest.mark.parametrize(
    "changes", [{"guards": ALL_GUARDS - {"reask"}}, {"max_reasks": 0}], ids=["guard", "limit"]
)
def test_without_re_asks_a_broken_reply_is_an_error(
    wire: WireServer, monkeypatch: pytest.MonkeyPatch, changes: dict[str, Any]
) -> None:
    broken = '[{"name": "get_weather", "arguments": {"city": '
    _default_model_as(monkeypatch, **changes)
    wire.push(Reply(body=completion(broken)))
    with pytest.raises(LLMError, match="reply was not usable"):
        Runtime(provider(wire)).exec("Weather in Paris?", tools=[get_weather])
    assert len(wire.requests) == 1  # not asked again
