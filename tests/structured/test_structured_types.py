"""``response_format=`` takes any type a tool parameter may have, on every path.

Dataclasses, ``TypedDict``\\ s, ``list[int]``, ``int``, ``Literal``, unions of
models, ``Annotated`` constraints: each comes back as a value of the type, by
the native format, the hidden submit tool and the prompt, through ``exec``,
``async_exec`` and ``stream``, with the repair turn and ``choices=`` schema
options too. A type whose JSON Schema is not an object travels wrapped as
``{"result": ...}`` (providers and tool parameters need an object at the
root) and is unwrapped before validation.
"""

from __future__ import annotations

import asyncio
import dataclasses
import enum
import json
from collections.abc import Callable
from typing import Annotated, Any, Literal

import pydantic
import pytest
from typing_extensions import TypedDict

from openprogram import InvalidSchemaError, Runtime, ValidationFailedError
from openprogram.providers.base import ProviderRequest
from openprogram.runtime import StreamFinal
from openprogram.structured import output_schema
from openprogram.testing import FunctionProvider, SchemaProvider, ScriptedProvider, call


@dataclasses.dataclass
class Point:
    x: int
    y: int


@dataclasses.dataclass
class Route:
    name: str
    stops: list[Point]


class Invoice(TypedDict):
    number: str
    total_cents: int


class Cat(pydantic.BaseModel):
    kind: Literal["cat"]
    lives: int


class Dog(pydantic.BaseModel):
    kind: Literal["dog"]
    good: bool


class Shade(enum.Enum):
    LIGHT = "light"
    DARK = "dark"


# (type, a JSON answer as a model writes it, the value exec returns, wrapped on the wire)
CASES: list[tuple[Any, Any, Any, bool]] = [
    (Point, {"x": 1, "y": 2}, Point(1, 2), False),
    (Route, {"name": "r", "stops": [{"x": 0, "y": 1}]}, Route("r", [Point(0, 1)]), False),
    (Invoice, {"number": "F-1", "total_cents": 5}, {"number": "F-1", "total_cents": 5}, False),
    (dict[str, int], {"a": 1}, {"a": 1}, False),
    (list[int], [1, 2, 3], [1, 2, 3], True),
    (int, 42, 42, True),
    (str, "hello", "hello", True),
    (Literal["yes", "no"], "no", "no", True),
    (Shade, "dark", Shade.DARK, True),
    (Cat | Dog, {"kind": "dog", "good": True}, Dog(kind="dog", good=True), True),
    (list[Cat | Dog], [{"kind": "cat", "lives": 9}], [Cat(kind="cat", lives=9)], True),
    (Point | None, None, None, True),
    (tuple[int, str], [1, "a"], (1, "a"), True),
    (Annotated[int, pydantic.Field(ge=0, le=10)], 7, 7, True),
]
IDS = [repr(case[0]).replace("typing.", "") for case in CASES]


def _written(answer: Any, wrapped: bool) -> str:
    return json.dumps({"result": answer} if wrapped else answer)


@pytest.mark.parametrize(("tp", "answer", "expected", "wrapped"), CASES, ids=IDS)
def test_native_format_gives_a_value_of_the_type(
    tp: Any, answer: Any, expected: Any, wrapped: bool
) -> None:
    provider = ScriptedProvider([_written(answer, wrapped)])
    value = Runtime(provider).exec("Answer.", tools=[], response_format=tp)
    assert value == expected
    assert type(value) is type(expected)
    sent = provider.requests[0].response_format
    assert sent is not None
    assert sent.schema["type"] == "object"  # every wire needs an object at the root
    assert ("result" in sent.schema.get("properties", {})) is wrapped


@pytest.mark.parametrize(("tp", "answer", "expected", "wrapped"), CASES, ids=IDS)
def test_the_submit_tool_gives_a_value_of_the_type(
    tp: Any, answer: Any, expected: Any, wrapped: bool
) -> None:
    def model(request: ProviderRequest) -> Any:
        [submit] = request.tools
        assert submit["name"] == "submit_result"
        assert submit["parameters"]["type"] == "object"
        arguments = {"result": answer} if wrapped else answer
        return call("submit_result", **arguments)

    provider = FunctionProvider(model, native_structured_output=False)
    assert Runtime(provider).exec("Answer.", tools=[], response_format=tp) == expected


@pytest.mark.parametrize(("tp", "answer", "expected", "wrapped"), CASES[:6], ids=IDS[:6])
def test_the_prompt_strategy_gives_a_value_of_the_type(
    tp: Any, answer: Any, expected: Any, wrapped: bool
) -> None:
    def model(request: ProviderRequest) -> str:
        schema = request.messages[0].text.rsplit("\n", 1)[1]
        assert json.loads(schema) == output_schema(tp).schema  # the type's own schema, unwrapped
        return f"Here:\n```json\n{json.dumps(answer)}\n```"

    provider = FunctionProvider(model, native_structured_output=False)
    runtime = Runtime(provider)
    got = runtime.exec("Answer.", tools=[], response_format=tp, structured_fallback="prompt")
    assert got == expected


def test_a_bare_answer_for_a_wrapped_type_is_taken_as_it_is() -> None:
    provider = ScriptedProvider(["[4, 5]"])
    assert Runtime(provider).exec("Numbers.", tools=[], response_format=list[int]) == [4, 5]


def test_a_bad_answer_gets_one_repair_turn_listing_what_is_wrong() -> None:
    provider = ScriptedProvider(['{"result": [1, "two"]}', '{"result": [1, 2]}'])
    assert Runtime(provider).exec("Numbers.", tools=[], response_format=list[int]) == [1, 2]
    assert provider.requests[1].messages[-1].text == (
        "Your answer does not match the required schema:\n"
        "- [1]: expected integer\n"
        "Reply again with the whole corrected answer as JSON only."
    )


def test_a_dataclass_answer_is_read_strictly_and_its_violations_named() -> None:
    provider = ScriptedProvider(['{"x": "1", "y": 2}', '{"x": 1.5}'])
    with pytest.raises(ValidationFailedError) as info:
        Runtime(provider).exec("Where?", tools=[], response_format=Point)
    assert info.value.violations == ("x: expected integer", "y: missing required field")
    assert (
        provider.requests[1]
        .messages[-1]
        .text.startswith("Your answer does not match the required schema:\n- x: expected integer\n")
    )


def test_async_exec_and_stream_give_the_same_value() -> None:
    async def main() -> tuple[Any, Any]:
        runtime = Runtime(ScriptedProvider(['{"result": [1]}', '{"result": [2]}']))
        first = await runtime.async_exec("One.", tools=[], response_format=list[int])
        events = [e async for e in runtime.stream("Two.", tools=[], response_format=list[int])]
        final = events[-1]
        assert isinstance(final, StreamFinal)
        return first, final.output

    assert asyncio.run(main()) == ([1], [2])


@pytest.mark.parametrize("native", [True, False])
@pytest.mark.parametrize(("tp", "answer", "expected", "wrapped"), CASES, ids=IDS)
def test_generated_answers_come_back_as_values_of_the_type(
    native: bool, tp: Any, answer: Any, expected: Any, wrapped: bool
) -> None:
    """SchemaProvider answers from the wire schema: what it writes must validate."""
    value = Runtime(SchemaProvider(native_structured_output=native)).exec(
        "Answer.", tools=[], response_format=tp
    )
    assert isinstance(value, type(expected)) or expected is None


def test_a_dataclass_is_a_schema_option_of_a_decision() -> None:
    provider = ScriptedProvider(['{"call": "move", "args": {"x": 3, "y": 4}}'])
    picked = Runtime(provider).exec(
        "Where to?", tools=[], choices={"stay": "stayed", "move": ("Move to a point.", Point)}
    )
    assert picked == {"decision": "move", "x": 3, "y": 4}


@pytest.mark.parametrize(
    ("bad", "fragment"),
    [
        (list[Callable[[], int]], "response_format=list[collections.abc.Callable[[], int]]"),
        (dict[int, str], "dict keys must be strings"),
        (Literal[1.5], "Literal values must be str, int, bool, None or Enum members"),
        (Annotated[str, pydantic.Field(pattern=r"(?=a)")], "cannot be checked: look-around"),
    ],
)
def test_a_type_without_a_json_schema_is_refused_before_any_request(
    bad: Any, fragment: str
) -> None:
    provider = ScriptedProvider(["never"])
    with pytest.raises(InvalidSchemaError, match="has no JSON Schema") as info:
        Runtime(provider).exec("x", tools=[], response_format=bad)
    assert fragment in str(info.value)
    assert provider.requests == []
