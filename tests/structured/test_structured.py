"""Structured output, unit level: normalising response_format, parsing, strategies, turns."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal

import pydantic
import pytest

from openprogram.exceptions import (
    InvalidJSONError,
    InvalidSchemaError,
    MissingSubmissionError,
    RefusalError,
    StructuredOutputError,
    UnsupportedStructuredOutputError,
    UserError,
    ValidationFailedError,
)
from openprogram.messages import (
    AssistantMessage,
    TextContent,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)
from openprogram.structured import (
    OutputSchema,
    choose_strategy,
    iter_json_values,
    output_schema,
    parse_json_answer,
)
from openprogram.structured._turns import Finished, Repair, StructuredTurns


class Person(pydantic.BaseModel):
    name: str
    age: int = pydantic.Field(ge=0)


class Team(pydantic.BaseModel):
    lead: Person
    members: list[Person] = []


POINT = {
    "title": "point 2d",
    "type": "object",
    "properties": {"x": {"type": "number"}, "y": {"type": "number"}},
    "required": ["x", "y"],
    "additionalProperties": False,
}


def reply(text: str = "", *calls: ToolCall, stop: Any = "stop") -> AssistantMessage:
    content: list[Any] = [TextContent(text)] if text else []
    return AssistantMessage(tuple(content) + calls, stop_reason=stop)


# -- normalising response_format ---------------------------------------------------------------


def test_model_class_gives_instances() -> None:
    out = output_schema(Person)
    assert out.name == "Person"
    assert out.model is Person
    assert out.schema == Person.model_json_schema()
    assert out.parse('{"name": "Ada", "age": 36}') == Person(name="Ada", age=36)


def test_model_violations_are_listed_with_paths() -> None:
    out = output_schema(Team)
    with pytest.raises(ValidationFailedError) as info:
        out.validate({"lead": {"name": "Ada", "age": -1}, "members": [{"age": "x"}]})
    assert info.value.code == "validation_failed"
    assert info.value.violations == (
        "lead.age: must be greater than or equal to 0",
        "members[0].name: missing required field",
        "members[0].age: expected integer",
    )
    assert "  - lead.age: must be greater than or equal to 0\n" in str(info.value)


def test_json_schema_dict_gives_the_validated_value() -> None:
    out = output_schema(POINT)
    assert out.name == "point_2d"
    assert out.model is None
    assert out.parse('{"x": 1, "y": 2.5}') == {"x": 1, "y": 2.5}
    with pytest.raises(ValidationFailedError) as info:
        out.parse('{"x": "one"}')
    assert len(info.value.violations) == 2
    assert info.value.raw == '{"x": "one"}'


def test_output_schema_passes_through() -> None:
    out = output_schema(Person)
    assert output_schema(out) is out


class Opaque:
    """A class pydantic has no schema for."""


@pytest.mark.parametrize(
    ("bad", "fragment"),
    [
        ({"type": "objekt"}, "not a valid JSON Schema at type"),
        ({"properties": {"a": {"minimum": "zero"}}}, "at properties/a/minimum"),
        (Opaque, "response_format=Opaque has no JSON Schema: unsupported annotation"),
        (list[Opaque], "Opaque] has no JSON Schema: unsupported annotation"),
        ("Person", "pass a type (a pydantic model, dataclass or TypedDict class"),
        ([POINT], "pass a type"),
        (42, "or a JSON Schema dict"),
    ],
)
def test_invalid_schemas_are_rejected(bad: Any, fragment: str) -> None:
    with pytest.raises(InvalidSchemaError) as info:
        output_schema(bad)
    assert info.value.code == "invalid_schema"
    assert fragment in str(info.value)


def test_model_without_json_schema_is_invalid_schema() -> None:
    class WithCallable(pydantic.BaseModel):
        on_done: Callable[[], None]

    with pytest.raises(InvalidSchemaError, match="WithCallable has no JSON Schema"):
        output_schema(WithCallable)


def test_non_object_roots_travel_wrapped_with_their_definitions_hoisted() -> None:
    class Item(pydantic.BaseModel):
        sku: str

    out = output_schema(pydantic.RootModel[list[Item]])
    assert out.wrapped
    wire = out.wire_schema
    assert wire["type"] == "object"
    assert wire["required"] == ["result"]
    assert "$defs" in wire
    assert "$defs" not in wire["properties"]["result"]
    assert out.unwrap({"result": [{"sku": "a"}]}) == [{"sku": "a"}]
    assert out.parse('{"result": [{"sku": "a"}]}').root == [Item(sku="a")]
    # a model that skipped the wrapper is taken at its word
    assert out.parse('[{"sku": "b"}]').root == [Item(sku="b")]


def test_object_roots_travel_unwrapped() -> None:
    out = output_schema(POINT)
    assert not out.wrapped
    assert out.wire_schema == POINT
    assert out.unwrap({"result": 1}) == {"result": 1}
    assert out.response_format().schema == POINT
    assert out.response_format().name == "point_2d"


# -- finding JSON in text ----------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        '{"a": 1}',
        '  \n{"a": 1}\n',
        'Here you go:\n```json\n{"a": 1}\n```\nDone.',
        '```\n{"a": 1}\n```',
        'I think {"a": 0} is wrong, so: {"a": 1}',
        'Answer {"a": 1} (final)',
    ],
)
def test_json_answer_is_found_around_prose_and_fences(text: str) -> None:
    assert parse_json_answer(text) == {"a": 1}


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("", "the answer is empty"),
        ("   ", "the answer is empty"),
        ("no json here", "the answer is not valid JSON"),
        ('{"a": NaN}', "NaN is not valid JSON"),
        ('{"a": 1', "the answer is not valid JSON"),
    ],
)
def test_unparseable_answers_raise_invalid_json(text: str, fragment: str) -> None:
    with pytest.raises(InvalidJSONError) as info:
        parse_json_answer(text)
    assert info.value.code == "invalid_json"
    assert fragment in str(info.value)
    assert info.value.raw == text


def test_iter_json_values_skips_stray_braces_and_nested_values() -> None:
    text = 'use {braces} like {"a": {"b": [1, {"c": 2}]}} then [3] and {"d": 4}'
    assert list(iter_json_values(text)) == [{"a": {"b": [1, {"c": 2}]}}, [3], {"d": 4}]
    assert list(iter_json_values(text, "{")) == [{"a": {"b": [1, {"c": 2}]}}, {"d": 4}]


# -- strategy ----------------------------------------------------------------------------------


class _Provider:
    def __init__(self, native: bool) -> None:
        self.name = "fake"
        self.native_structured_output = native


def test_strategy_prefers_native_then_the_fallback() -> None:
    assert choose_strategy(_Provider(True)) == "native"
    assert choose_strategy(_Provider(True), None) == "native"
    assert choose_strategy(_Provider(False)) == "tool"
    assert choose_strategy(_Provider(False), "prompt") == "prompt"
    assert choose_strategy(object()) == "tool"  # no flag at all: not native


def test_strategy_without_native_or_fallback_is_unsupported() -> None:
    with pytest.raises(UnsupportedStructuredOutputError) as info:
        choose_strategy(_Provider(False), None)
    assert info.value.code == "unsupported"
    assert "provider 'fake' has no native structured output" in str(info.value)


def test_unknown_fallback_is_a_user_error() -> None:
    with pytest.raises(UserError, match="structured_fallback='json' is not supported"):
        choose_strategy(_Provider(True), "json")  # type: ignore[arg-type]


# -- turns: native and prompt ------------------------------------------------------------------


def test_native_turns_carry_the_response_format_and_no_tool() -> None:
    turns = StructuredTurns(output_schema(Person), "native")
    assert turns.response_format is not None
    assert turns.response_format.name == "Person"
    assert turns.submit_spec is None
    assert turns.instructions is None
    assert turns.judge_text(reply('{"name": "Ada", "age": 36}')) == Finished(
        Person(name="Ada", age=36)
    )


def test_native_bad_answer_gets_one_repair_with_exact_violations() -> None:
    turns = StructuredTurns(output_schema(Person), "native")
    step = turns.judge_text(reply('{"name": "Ada", "age": "old"}'))
    assert isinstance(step, Repair)
    assert step.tool_choice is None
    (message,) = step.messages
    assert isinstance(message, UserMessage)
    assert message.text == (
        "Your answer does not match the required schema:\n"
        "- age: expected integer\n"
        "Reply again with the whole corrected answer as JSON only."
    )
    with pytest.raises(ValidationFailedError) as info:
        turns.judge_text(reply('{"name": "Ada"}'))
    assert info.value.violations == ("age: missing required field",)
    assert str(info.value).endswith("(after one repair turn)")
    assert info.value.raw == '{"name": "Ada"}'


def test_native_invalid_json_then_repair_succeeds() -> None:
    turns = StructuredTurns(output_schema(Person), "native")
    step = turns.judge_text(reply('{"name": "Ada", '))
    assert isinstance(step, Repair)
    assert step.messages[0].text.startswith("Your answer is not valid JSON: ")  # type: ignore[union-attr]
    assert turns.judge_text(reply('{"name": "Ada", "age": 1}')) == Finished(
        Person(name="Ada", age=1)
    )


def test_invalid_json_twice_raises_invalid_json() -> None:
    turns = StructuredTurns(output_schema(POINT), "prompt")
    turns.judge_text(reply("sorry"))
    with pytest.raises(InvalidJSONError, match="after one repair turn"):
        turns.judge_text(reply("still prose"))


def test_refusal_raises_at_once() -> None:
    turns = StructuredTurns(output_schema(Person), "native")
    with pytest.raises(RefusalError) as info:
        turns.judge_text(reply("I can't help with that.", stop="refusal"))
    assert info.value.code == "refusal"
    assert info.value.raw == "I can't help with that."
    assert isinstance(info.value, StructuredOutputError)


def test_prompt_turns_put_the_schema_in_the_instructions() -> None:
    turns = StructuredTurns(output_schema(POINT), "prompt")
    assert turns.response_format is None
    assert turns.submit_spec is None
    assert turns.instructions is not None
    assert '"required":["x","y"]' in turns.instructions
    assert turns.judge_text(reply('Sure: ```json\n{"x": 1, "y": 2}\n```')) == Finished(
        {"x": 1, "y": 2}
    )


# -- turns: the submit tool --------------------------------------------------------------------


def test_submit_tool_spec_avoids_taken_names() -> None:
    turns = StructuredTurns(output_schema(POINT), "tool", taken_names={"submit_result"})
    spec = turns.submit_spec
    assert spec is not None
    assert spec["name"] == "submit_result_2"
    assert spec["parameters"] == POINT
    assert turns.response_format is None
    assert (
        turns.instructions
        == "When you have the final answer, submit it by calling submit_result_2."
    )


def test_submission_is_validated_and_unwrapped() -> None:
    turns = StructuredTurns(output_schema(pydantic.RootModel[list[int]]), "tool")
    call = ToolCall("c1", "submit_result", {"result": [1, 2]})
    assert turns.submit_calls(reply("", call)) == [call]
    step = turns.judge_submission(reply("", call))
    assert isinstance(step, Finished)
    assert step.value.root == [1, 2]


def test_bad_submission_is_answered_with_an_error_result() -> None:
    turns = StructuredTurns(output_schema(POINT), "tool")
    first = ToolCall("c1", "submit_result", {"x": 1})
    second = ToolCall("c2", "submit_result", {"x": 1, "y": 2})
    step = turns.judge_submission(reply("", first, second))
    assert isinstance(step, Repair)
    assert step.messages == (
        ToolResultMessage(
            "c1",
            "submit_result",
            "Your answer does not match the required schema:\n"
            "- y: missing required field\n"
            "Call submit_result again with the whole corrected answer.",
            is_error=True,
        ),
        ToolResultMessage(
            "c2", "submit_result", "Ignored: submit exactly one answer.", is_error=True
        ),
    )
    with pytest.raises(ValidationFailedError):
        turns.judge_submission(reply("", ToolCall("c3", "submit_result", {"x": "1", "y": 2})))


def test_unparseable_submission_arguments_are_invalid_json() -> None:
    turns = StructuredTurns(output_schema(POINT), "tool")
    broken = ToolCall("c1", "submit_result", {}, arguments_error="Expecting ',' at char 9")
    step = turns.judge_submission(reply("", broken))
    assert isinstance(step, Repair)
    assert "not valid JSON" in step.messages[0].content  # type: ignore[union-attr]
    with pytest.raises(InvalidJSONError, match="Expecting ','"):
        turns.judge_submission(reply("", broken))


def test_text_instead_of_submission_forces_the_submit_tool_once() -> None:
    turns = StructuredTurns(output_schema(POINT), "tool")
    step = turns.judge_text(reply("The point is (1, 2)."))
    assert isinstance(step, Repair)
    assert step.tool_choice == {"type": "function", "name": "submit_result"}
    assert step.messages == (
        UserMessage("You did not submit a final answer. Call submit_result now with your answer."),
    )
    with pytest.raises(MissingSubmissionError) as info:
        turns.judge_text(reply("Really, (1, 2)."))
    assert info.value.code == "missing_submission"
    assert info.value.raw == "Really, (1, 2)."


def test_valid_json_text_is_accepted_without_a_submission() -> None:
    turns = StructuredTurns(output_schema(POINT), "tool")
    assert turns.judge_text(reply('{"x": 0, "y": 0}')) == Finished({"x": 0, "y": 0})


def test_codes_are_stable() -> None:
    codes = {
        cls.code
        for cls in (
            InvalidSchemaError,
            InvalidJSONError,
            ValidationFailedError,
            MissingSubmissionError,
            RefusalError,
            UnsupportedStructuredOutputError,
        )
    }
    assert codes == {
        "invalid_schema",
        "invalid_json",
        "validation_failed",
        "missing_submission",
        "refusal",
        "unsupported",
    }


def test_literal_fields_render_into_the_wire_schema() -> None:
    class Mood(pydantic.BaseModel):
        mood: Literal["happy", "sad"]

    out: OutputSchema = output_schema(Mood)
    assert out.wire_schema["properties"]["mood"]["enum"] == ["happy", "sad"]


def test_last_chance_raises_without_a_repair_turn() -> None:
    turns = StructuredTurns(output_schema(POINT), "native")
    turns.last_chance()
    with pytest.raises(InvalidJSONError, match=r"\(no repair turn was left\)$"):
        turns.judge_text(reply("nope"))


def test_unexpected_fields_are_named() -> None:
    with pytest.raises(ValidationFailedError) as info:
        output_schema(POINT).validate({"x": 1, "y": 2, "z": 3})
    assert info.value.violations == ("z: unexpected field (allowed: x, y)",)
