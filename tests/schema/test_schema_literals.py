"""``Literal`` and ``Enum`` values are matched by JSON type, as the schema's ``enum``/``const``.

pydantic compares literals by Python equality, where ``True == 1``: JSON ``true``
would pass for ``Literal[1, 2]`` although the schema sent (``{"enum": [1, 2],
"type": "integer"}``) refuses it. Every path that validates a model's JSON against a
derived schema (tool arguments, the loop, ``run_tools``, ``choices=``, structured
answers) refuses it, at any depth; ``1.0`` still matches ``1``, as in JSON Schema.
"""

from __future__ import annotations

import asyncio
import dataclasses
import enum
from typing import Annotated, Any, Literal, Optional

import jsonschema
import pydantic
import pytest
from typing_extensions import TypedDict

from openprogram import Runtime, ToolCall, function
from openprogram.exceptions import DecisionError, ValidationFailedError
from openprogram.runtime import run_tools_sync
from openprogram.schema import ArgumentsError, derive_schema
from openprogram.testing import ScriptedProvider, call


class Rank(enum.IntEnum):
    LOW = 1
    HIGH = 2


class Shade(enum.Enum):
    LIGHT = "light"
    DARK = "dark"


class Level(pydantic.BaseModel):
    level: Literal[1, 2]


@dataclasses.dataclass
class Step:
    size: Literal[1, 2]


class Switch(TypedDict):
    on: Literal[True]


@pydantic.dataclasses.dataclass
class Turn:
    way: Literal[0, 1]


class Cat(pydantic.BaseModel):
    kind: Literal[1]


class Dog(pydantic.BaseModel):
    kind: Literal[2]


class Pet(pydantic.BaseModel):
    pet: Annotated[Cat | Dog, pydantic.Field(discriminator="kind")]


def _taking(tp: Any) -> Any:
    """A function whose one parameter ``b`` has type ``tp``."""
    namespace: dict[str, Any] = {"T": tp}
    exec("def take(b: T) -> None:\n    '''Take b.'''\n", namespace)  # the annotation is under test
    return namespace["take"]


# (annotation, arguments, the violation): the schema refuses each of them.
REFUSED: list[tuple[Any, Any, str]] = [
    (Literal[1, 2], True, "b: expected 1 or 2"),
    (Literal[1, 2], False, "b: expected 1 or 2"),
    (Literal[1], True, "b: expected 1"),
    (Literal[0], False, "b: expected 0"),
    (Literal[True], 1, "b: expected True"),
    (Literal[False], 0, "b: expected False"),
    (Literal[0, True], False, "b: expected 0 or True"),
    (Literal[1, True], 1.5, "b: expected 1 or True"),
    (Optional[Literal[1, 2]], True, "b: expected 1 or 2"),  # noqa: UP045 - the form under test
    (Literal[1, 2] | None, True, "b: expected 1 or 2"),
    (list[Literal[1, 2]], [1, True], "b[1]: expected 1 or 2"),
    (tuple[Literal[1, 2], ...], [True], "b[0]: expected 1 or 2"),
    (tuple[str, Literal[1]], ["a", True], "b[1]: expected 1"),
    (set[Literal[1, 2]], [2, True], "b[1]: expected 1 or 2"),
    (dict[str, Literal[1, 2]], {"k": True}, "b.k: expected 1 or 2"),
    (Annotated[Literal[1, 2], pydantic.Field(description="A level.")], True, "b: expected 1 or 2"),
    (Rank, True, "b: expected 1 or 2"),
    (list[Rank], [False], "b[0]: expected 1 or 2"),
    (Level, {"level": True}, "b.level: expected 1 or 2"),
    (list[Level], [{"level": 2}, {"level": False}], "b[1].level: expected 1 or 2"),
    (Step, {"size": True}, "b.size: expected 1 or 2"),
    (Switch, {"on": 1}, "b.on: expected True"),
    (Turn, {"way": False}, "b.way: expected 0 or 1"),
    (Pet, {"pet": {"kind": True}}, "b.pet.kind: expected 1"),
]


@pytest.mark.parametrize(("tp", "value", "violation"), REFUSED, ids=repr)
def test_a_boolean_never_matches_a_number_literal_nor_a_number_a_boolean_one(
    tp: Any, value: Any, violation: str
) -> None:
    schema = derive_schema(_taking(tp))
    assert not jsonschema.Draft202012Validator(schema.parameters).is_valid({"b": value})
    with pytest.raises(ArgumentsError) as info:
        schema.validate({"b": value})
    assert info.value.violations == (violation,)


# (annotation, arguments, what the function gets): the schema accepts each of them.
ACCEPTED: list[tuple[Any, Any, Any]] = [
    (Literal[1, 2], 2, 2),
    (Literal[1], 1.0, 1),  # JSON Schema's integer: 1.0 is 1
    (Literal[True], True, True),
    (Literal[0, True], True, True),
    (Literal[0, True], 0, 0),
    (Literal[0, True], 0.0, 0),
    (Literal["a", None], None, None),
    (list[Literal[1, 2]], [1, 2.0], [1, 2]),
    (Rank, 2.0, Rank.HIGH),
    (Literal[Shade.DARK], "dark", Shade.DARK),  # the schema says {"const": "dark"}
    (Level, {"level": 1.0}, Level(level=1)),
    (Switch, {"on": True}, {"on": True}),
    (Turn, {"way": 0}, Turn(way=0)),
    (Pet, {"pet": {"kind": 2.0}}, Pet(pet=Dog(kind=2))),
]


@pytest.mark.parametrize(("tp", "value", "expected"), ACCEPTED, ids=repr)
def test_a_literal_of_the_same_json_type_and_value_is_accepted(
    tp: Any, value: Any, expected: Any
) -> None:
    schema = derive_schema(_taking(tp))
    assert jsonschema.Draft202012Validator(schema.parameters).is_valid({"b": value})
    got = schema.validate({"b": value})["b"]
    assert got == expected
    assert type(got) is type(expected)


def test_the_property_tests_falsifying_example_is_judged_like_the_schema() -> None:
    def generated(
        a: str,
        b: Optional[Literal[1, 2]],  # noqa: UP045 - as the property test wrote it
        c: str,
        d: str | None = None,
    ) -> None:
        """Generated."""

    schema = derive_schema(generated)
    args = {"a": "", "b": True, "c": ""}
    assert not jsonschema.Draft202012Validator(schema.parameters).is_valid(args)
    with pytest.raises(ArgumentsError) as info:
        schema.validate(args)
    assert info.value.violations == ("b: expected 1 or 2",)


# -- the same rule on every path ---------------------------------------------------------------


def test_the_loop_does_not_run_a_tool_given_true_for_a_number_literal() -> None:
    ran: list[int] = []

    @function(register_globally=False)
    def dim(level: Literal[1, 2]) -> str:
        """Dim the light."""
        ran.append(level)
        return "dimmed"

    provider = ScriptedProvider([call("dim", level=True), call("dim", level=2), "ok"])
    assert Runtime(provider).exec("Dim it.", tools=[dim]) == "ok"
    assert ran == [2]
    refusal = provider.requests[1].messages[-1]
    assert "- level: expected 1 or 2" in refusal.content


def test_execute_and_run_tools_refuse_a_number_for_a_boolean_literal() -> None:
    ran: list[Any] = []

    def confirm(sure: Literal[True], ids: list[Literal[1, 2]]) -> str:
        """Confirm."""
        ran.append((sure, ids))
        return "ok"

    tool = function(confirm, register_globally=False)
    result = asyncio.run(tool.execute({"sure": 1, "ids": [1]}))
    assert result.error_kind == "invalid_arguments"
    assert result.violations == ("sure: expected True",)
    results = run_tools_sync(
        [
            ToolCall("a", "confirm", {"sure": True, "ids": [True]}),
            ToolCall("b", "confirm", {"sure": True, "ids": [2.0]}),
        ],
        [tool],
    )
    assert results[0].is_error
    assert "- ids[0]: expected 1 or 2" in results[0].content
    assert not results[1].is_error
    assert ran == [(True, [2])]


def escalate(tier: Literal[1, 2]) -> str:
    """Escalate the ticket.

    Args:
        tier: Support tier.
    """
    return f"tier {tier}"


def test_a_choices_pick_with_true_for_a_number_literal_is_refused() -> None:
    loose = '{"call": "escalate", "args": {"tier": true}}'
    provider = ScriptedProvider([loose, loose])
    with pytest.raises(DecisionError) as info:
        Runtime(provider).exec("Handle it.", tools=[], choices=[escalate])
    assert "tier: expected 1 or 2" in str(info.value)
    exact = ScriptedProvider(['{"call": "escalate", "args": {"tier": 2.0}}'])
    assert Runtime(exact).exec("Handle it.", tools=[], choices=[escalate]) == "tier 2"


class Verdict(pydantic.BaseModel):
    score: Literal[1, 2, 3]
    final: Literal[True]
    steps: list[Level] = []


def test_a_structured_answer_with_true_for_a_number_literal_is_refused() -> None:
    loose = '{"score": true, "final": 1, "steps": [{"level": false}]}'
    provider = ScriptedProvider([loose, loose])
    with pytest.raises(ValidationFailedError) as info:
        Runtime(provider).exec("Judge.", tools=[], response_format=Verdict)
    assert info.value.violations == (
        "score: expected 1, 2 or 3",
        "final: expected True",
        "steps[0].level: expected 1 or 2",
    )
    exact = '{"score": 3.0, "final": true, "steps": [{"level": 2}]}'
    answer = Runtime(ScriptedProvider([exact])).exec("Judge.", tools=[], response_format=Verdict)
    assert answer == Verdict(score=3, final=True, steps=[Level(level=2)])
    # The user's own classes are left as they were.
    assert Verdict.__pydantic_complete__
    assert Level.__pydantic_complete__
    assert Verdict.model_validate({"score": 1, "final": True}).score == 1


def test_a_submitted_structured_answer_with_true_for_a_number_literal_is_refused() -> None:
    provider = ScriptedProvider(
        [call("submit_result", score=True, final=True), call("submit_result", score=2, final=True)],
        native_structured_output=False,
    )
    answer = Runtime(provider).exec("Judge.", tools=[], response_format=Verdict)
    assert answer == Verdict(score=2, final=True)
    refusal = provider.requests[1].messages[-1]
    assert "score: expected 1, 2 or 3" in refusal.content
