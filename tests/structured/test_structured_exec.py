"""Structured output through the runtime: native, submit tool and prompt strategies."""

from __future__ import annotations

from typing import Any

import pydantic
import pytest

from openprogram import (
    InvalidSchemaError,
    MissingSubmissionError,
    RefusalError,
    Runtime,
    UnsupportedStructuredOutputError,
    UserError,
    ValidationFailedError,
    agentic_function,
)
from openprogram.events import ToolCallStarted
from openprogram.messages import AssistantMessage, TextContent, ToolResultMessage, UserMessage
from openprogram.providers.base import ProviderRequest
from openprogram.testing import FunctionProvider, ScriptedProvider, call


class City(pydantic.BaseModel):
    name: str
    population: int = pydantic.Field(ge=0)


def census(city: str) -> int:
    """Population of a city."""
    return 2_100_000


def no_native(script: list[Any]) -> ScriptedProvider:
    """A provider without native structured output (the fakes declare it by default)."""
    return ScriptedProvider(script, native_structured_output=False)


# -- native ------------------------------------------------------------------------------------


def test_native_json_reply_becomes_an_instance_after_tool_calls() -> None:
    provider = ScriptedProvider(
        [call("census", city="Paris"), '{"name": "Paris", "population": 2100000}']
    )
    rt = Runtime(provider)
    assert rt.exec("Paris?", tools=[census], response_format=City) == City(
        name="Paris", population=2_100_000
    )
    for request in provider.requests:
        assert request.response_format is not None
        assert request.response_format.name == "City"
        assert request.response_format.schema == City.model_json_schema()
        assert [s["name"] for s in request.tools] == ["census"]
        assert request.parallel_tool_calls is True
    assert provider.requests[0].messages[0] == UserMessage("Paris?")  # no instructions needed
    assert rt.last_run is not None
    assert rt.last_run.stop_reason == "stop"


def test_native_bad_answer_gets_one_repair_turn() -> None:
    provider = ScriptedProvider(['{"name": "Paris"}', '{"name": "Paris", "population": 1}'])
    assert Runtime(provider).exec("x", tools=[], response_format=City).population == 1
    assert provider.requests[1].messages[-1] == UserMessage(
        "Your answer does not match the required schema:\n"
        "- population: missing required field\n"
        "Reply again with the whole corrected answer as JSON only."
    )


def test_native_second_bad_answer_raises() -> None:
    provider = ScriptedProvider(['{"name": "Paris"}', '{"name": "Paris", "population": -1}'])
    rt = Runtime(provider)
    with pytest.raises(ValidationFailedError) as info:
        rt.exec("x", tools=[], response_format=City)
    assert info.value.violations == ("population: must be greater than or equal to 0",)
    assert info.value.raw == '{"name": "Paris", "population": -1}'
    assert rt.last_run is not None
    assert rt.last_run.stop_reason == "error"


def test_json_schema_dict_returns_the_validated_value() -> None:
    schema = {"type": "array", "items": {"type": "integer"}}
    provider = ScriptedProvider(['{"result": [1, 2, 3]}'])
    assert Runtime(provider).exec("x", tools=[], response_format=schema) == [1, 2, 3]
    sent = provider.requests[0].response_format
    assert sent is not None
    assert sent.schema["properties"]["result"] == schema


def test_refusal_raises_without_a_repair_turn() -> None:
    refusal = AssistantMessage((TextContent("I can't do that."),), stop_reason="refusal")
    provider = ScriptedProvider([refusal, "never"])
    with pytest.raises(RefusalError):
        Runtime(provider).exec("x", tools=[], response_format=City)
    assert provider.remaining == 1


# -- the hidden submit tool --------------------------------------------------------------------


def test_submit_tool_is_offered_sequentially_and_never_executed() -> None:
    provider = no_native(
        [call("census", city="Lyon"), call("submit_result", name="Lyon", population=500_000)]
    )
    rt = Runtime(provider)
    assert rt.exec("Lyon?", tools=[census], response_format=City) == City(
        name="Lyon", population=500_000
    )
    for request in provider.requests:
        assert [s["name"] for s in request.tools] == ["census", "submit_result"]
        assert request.tools[1]["parameters"] == City.model_json_schema()
        assert request.parallel_tool_calls is False
        assert request.response_format is None
    assert provider.requests[0].messages[0] == UserMessage(
        "Lyon?\n\nWhen you have the final answer, submit it by calling submit_result."
    )
    assert rt.last_run is not None
    started = [e.tool_name for e in rt.last_run.events if isinstance(e, ToolCallStarted)]
    assert started == ["census"]
    results = [m.tool_name for m in rt.last_run.messages if isinstance(m, ToolResultMessage)]
    assert results == ["census"]


def test_other_calls_beside_a_submission_still_run() -> None:
    ran: list[str] = []

    def note(text: str) -> str:
        """Write a note."""
        ran.append(text)
        return "noted"

    provider = no_native(
        [[call("note", text="done"), call("submit_result", name="X", population=1)]]
    )
    assert Runtime(provider).exec("x", tools=[note], response_format=City).name == "X"
    assert ran == ["done"]


def test_bad_submission_is_answered_and_repaired() -> None:
    provider = no_native(
        [
            call("submit_result", name="X", population="many"),
            call("submit_result", name="X", population=3),
        ]
    )
    rt = Runtime(provider)
    assert rt.exec("x", tools=[], response_format=City).population == 3
    repair = provider.requests[1].messages[-1]
    assert isinstance(repair, ToolResultMessage)
    assert repair.is_error
    assert repair.content == (
        "Your answer does not match the required schema:\n"
        "- population: expected integer\n"
        "Call submit_result again with the whole corrected answer."
    )


def test_text_instead_of_a_submission_forces_the_submit_tool_then_raises() -> None:
    provider = no_native(["It is Paris.", "Still Paris."])
    with pytest.raises(MissingSubmissionError, match="without calling submit_result"):
        Runtime(provider).exec("x", tools=[census], response_format=City)
    assert provider.requests[0].tool_choice == "auto"
    assert provider.requests[1].tool_choice == {"type": "function", "name": "submit_result"}


def test_tool_choice_none_offers_only_the_forced_submit_tool() -> None:
    provider = no_native([call("submit_result", name="X", population=1)])
    Runtime(provider).exec("x", tools=[census], tool_choice="none", response_format=City)
    (request,) = provider.requests
    assert [s["name"] for s in request.tools] == ["submit_result"]
    assert request.tool_choice == {"type": "function", "name": "submit_result"}


def test_submit_tool_avoids_a_callers_tool_of_the_same_name() -> None:
    def submit_result(text: str) -> str:
        """The caller's own tool."""
        return text

    provider = no_native([call("submit_result_2", name="X", population=1)])
    Runtime(provider).exec("x", tools=[submit_result], response_format=City)
    names = [s["name"] for s in provider.requests[0].tools]
    assert names == ["submit_result", "submit_result_2"]


def test_function_provider_without_native_support_uses_the_submit_tool() -> None:
    def model(request: ProviderRequest) -> Any:
        assert request.response_format is None
        return call("submit_result", name="Nice", population=340_000)

    provider = FunctionProvider(model, native_structured_output=False)
    assert Runtime(provider).exec("x", tools=[], response_format=City).name == "Nice"


def test_at_the_cap_finish_forces_the_submission() -> None:
    provider = no_native(
        [call("census", city="Paris"), call("submit_result", name="P", population=2)]
    )
    rt = Runtime(provider)
    result = rt.exec(
        "x", tools=[census], response_format=City, max_iterations=1, on_max_iterations="finish"
    )
    assert result == City(name="P", population=2)
    assert [s["name"] for s in provider.requests[1].tools] == ["submit_result"]
    assert rt.last_run is not None
    assert rt.last_run.stop_reason == "max_iterations"


def test_at_the_cap_return_without_an_answer_raises() -> None:
    provider = no_native([call("census", city="Paris")])
    with pytest.raises(MissingSubmissionError, match="no repair turn was left"):
        Runtime(provider).exec("x", tools=[census], response_format=City, max_iterations=1)


# -- the prompt fallback -----------------------------------------------------------------------


def test_prompt_fallback_puts_the_schema_in_the_request() -> None:
    provider = no_native(['Sure!\n```json\n{"name": "Oslo", "population": 700000}\n```'])
    result = Runtime(provider).exec(
        "Oslo?", tools=[], response_format=City, structured_fallback="prompt"
    )
    assert result == City(name="Oslo", population=700_000)
    (request,) = provider.requests
    assert request.tools == ()
    assert request.response_format is None
    text = request.messages[0].text
    assert text.startswith("Oslo?\n\nAnswer with one JSON value that conforms to this JSON Schema")
    assert '"required":["name","population"]' in text


def test_no_fallback_without_native_support_is_unsupported() -> None:
    provider = no_native(["never"])
    with pytest.raises(UnsupportedStructuredOutputError, match="structured_fallback=None"):
        Runtime(provider).exec("x", tools=[], response_format=City, structured_fallback=None)
    assert provider.requests == []


@pytest.mark.parametrize(
    ("kwargs", "error", "needle"),
    [
        ({"response_format": {"type": "objekt"}}, InvalidSchemaError, "not a valid JSON Schema"),
        ({"response_format": "City"}, InvalidSchemaError, "pass a type"),
        ({"response_format": type(Runtime)}, InvalidSchemaError, "has no JSON Schema"),
        ({"response_format": City, "choices": ["a"]}, UserError, "one or the other"),
        ({"response_format": City, "structured_fallback": "xml"}, UserError, "structured_fallback"),
    ],
)
def test_bad_structured_options_fail_before_any_request(
    kwargs: dict[str, Any], error: type[Exception], needle: str
) -> None:
    provider = ScriptedProvider(["never"])
    with pytest.raises(error, match=needle):
        Runtime(provider).exec("x", tools=[], **kwargs)
    assert provider.requests == []


# -- nesting -----------------------------------------------------------------------------------


@agentic_function(register_globally=False)  # keep the shared registry clean
def describe(city: str, runtime: Runtime) -> City:
    """Describe a city."""
    answer: City = runtime.exec(f"Describe {city}.", tools=[], response_format=City)
    return answer


def test_structured_exec_inside_an_agentic_function() -> None:
    provider = ScriptedProvider(
        [
            call("describe", city="Rome"),
            '{"name": "Rome", "population": 2800000}',
            "Rome has 2.8 million people.",
        ]
    )
    assert Runtime(provider).exec("Rome?", tools=[describe]) == "Rome has 2.8 million people."
    result = provider.requests[2].messages[-1]
    assert isinstance(result, ToolResultMessage)
    assert result.content == '{"name":"Rome","population":2800000}'
    assert provider.requests[0].response_format is None  # the outer exec returns text
