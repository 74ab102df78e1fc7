"""A model's JSON is checked exactly as the schema it was shown reads it, on every path.

Tool arguments (``execute``, the loop, ``run_tools``, ``choices=``) and
structured answers get no lax coercions: ``"yes"`` is not a boolean, ``"1"``
not an integer, ``"1e3"`` not a number. What the schema writes as strings
(dates, UUIDs, paths, decimals, enums) is still read from strings, and an
integer may be written ``2.0`` because JSON Schema says so.
"""

from __future__ import annotations

import asyncio
import dataclasses
import datetime
import decimal
import enum
import pathlib
import uuid
from typing import Annotated, Any, Literal

import pydantic
import pytest
from typing_extensions import TypedDict

from openprogram import Runtime, ToolCall, function
from openprogram.exceptions import DecisionError, ValidationFailedError
from openprogram.runtime import run_tools_sync
from openprogram.schema import ArgumentsError, derive_schema
from openprogram.testing import ScriptedProvider, call
from openprogram.tools import Tool


class Shade(enum.Enum):
    LIGHT = "light"
    DARK = "dark"


class Rank(enum.IntEnum):
    LOW = 1
    HIGH = 2


class Address(pydantic.BaseModel):
    city: str
    floor: int = 0
    lift: bool = False


@dataclasses.dataclass
class Box:
    width: float
    count: int = 1


class Flags(TypedDict):
    on: bool
    level: int


def scalars(flag: bool, count: int, ratio: float, name: str) -> str:
    """Take one value of each JSON scalar type."""
    return f"{flag} {count} {ratio} {name}"


GOOD = {"flag": True, "count": 2, "ratio": 0.5, "name": "n"}
LOOSE = [
    ("flag", "yes", "expected boolean"),
    ("flag", "true", "expected boolean"),
    ("flag", 1, "expected boolean"),
    ("flag", 0, "expected boolean"),
    ("count", True, "expected integer"),
    ("count", "1", "expected integer"),
    ("count", 1.5, "expected integer"),
    ("ratio", "1e3", "expected number"),
    ("ratio", "0.5", "expected number"),
    ("ratio", True, "expected number"),
    ("name", 42, "expected string"),
    ("name", None, "expected string"),
]


@pytest.mark.parametrize(("param", "value", "message"), LOOSE)
def test_a_value_of_another_json_type_is_refused(param: str, value: Any, message: str) -> None:
    tool = function(scalars, register_globally=False)
    result = asyncio.run(tool.execute({**GOOD, param: value}))
    assert result.is_error
    assert result.error_kind == "invalid_arguments"
    assert result.violations == (f"{param}: {message}",)


def test_every_json_type_the_schema_names_is_accepted() -> None:
    tool = function(scalars, register_globally=False)
    result = asyncio.run(tool.execute({"flag": False, "count": 2.0, "ratio": 3, "name": ""}))
    assert not result.is_error
    assert result.value == "False 2 3.0 "  # 2.0 is the integer 2; 3 the number 3.0


def rich(
    *,
    day: datetime.date,
    at: datetime.datetime,
    wait: datetime.timedelta,
    ident: uuid.UUID,
    where: pathlib.Path,
    price: decimal.Decimal,
    shade: Shade,
    rank: Rank,
    mode: Literal["fast", "slow"],
    pair: tuple[str, int],
    tags: set[str],
    raw: bytes,
    address: Address,
    box: Box,
    flags: Flags,
) -> None:
    """Take every kind of value the schema writes as a string, array or object."""


RICH = {
    "day": "2026-12-01",
    "at": "2026-12-01T10:30:00Z",
    "wait": "PT90S",
    "ident": "12345678-1234-5678-1234-567812345678",
    "where": "/tmp/x.txt",
    "price": "12.50",
    "shade": "dark",
    "rank": 2,
    "mode": "slow",
    "pair": ["a", 1],
    "tags": ["x", "y"],
    "raw": "bytes",
    "address": {"city": "Paris", "floor": 3.0},
    "box": {"width": 2},
    "flags": {"on": True, "level": 1},
}


def test_strings_arrays_and_objects_become_their_python_types() -> None:
    kwargs = derive_schema(rich).validate(RICH)
    assert kwargs["day"] == datetime.date(2026, 12, 1)
    assert kwargs["at"] == datetime.datetime(2026, 12, 1, 10, 30, tzinfo=datetime.UTC)
    assert kwargs["wait"] == datetime.timedelta(seconds=90)
    assert kwargs["ident"] == uuid.UUID(RICH["ident"])
    assert kwargs["where"] == pathlib.Path("/tmp/x.txt")
    assert kwargs["price"] == decimal.Decimal("12.50")
    assert kwargs["shade"] is Shade.DARK
    assert kwargs["rank"] is Rank.HIGH
    assert kwargs["pair"] == ("a", 1)
    assert kwargs["tags"] == {"x", "y"}
    assert kwargs["raw"] == b"bytes"
    assert kwargs["address"] == Address(city="Paris", floor=3)
    assert kwargs["box"] == Box(width=2.0)
    assert kwargs["flags"] == {"on": True, "level": 1}
    assert derive_schema(rich).validate({**RICH, "price": 12.5})["price"] == decimal.Decimal("12.5")


def test_nested_values_are_as_strict_as_top_level_ones() -> None:
    bad = {
        **RICH,
        "day": 20261201,
        "shade": "DARK",
        "rank": "2",
        "pair": ["a", "1"],
        "tags": ["x", "x"],
        "address": {"city": "Paris", "floor": "3", "lift": "no"},
        "box": {"width": "2"},
        "flags": {"on": 1, "level": True},
    }
    with pytest.raises(ArgumentsError) as info:
        derive_schema(rich).validate(bad)
    assert set(info.value.violations) == {
        "day: must be a valid date",
        "shade: expected 'light' or 'dark'",
        "rank: expected 1 or 2",
        "pair[1]: expected integer",
        "address.floor: expected integer",
        "address.lift: expected boolean",
        "box.width: expected number",
        "flags.on: expected boolean",
        "flags.level: expected integer",
        "tags: items must be unique, but 'x' appears more than once",
    }


def test_values_that_are_not_json_data_are_named_by_path() -> None:
    schema = derive_schema(rich)
    with pytest.raises(ArgumentsError) as info:
        schema.validate({**RICH, "where": "/tmp/\udcff", "flags": {"on": True, "level": object()}})
    assert info.value.violations == (
        "where: the string holds a lone surrogate, which JSON text cannot carry",
        "flags.level: expected JSON data, got a value of type 'object'",
    )


def test_nesting_beyond_the_json_parser_limit_still_validates() -> None:
    def keep(data: list[Any], n: int) -> None:
        """Keep deep data."""

    deep: Any = "leaf"
    for _ in range(1000):
        deep = [deep]
    schema = derive_schema(keep)
    assert schema.validate({"data": deep, "n": 2.0}) == {"data": deep, "n": 2}
    with pytest.raises(ArgumentsError) as info:
        schema.validate({"data": deep, "n": "2"})
    assert info.value.violations == ("n: expected integer",)


def test_python_calls_of_the_tool_are_plain_python() -> None:
    tool = function(scalars, register_globally=False)
    assert tool("yes", "1", "1e3", 42) == "yes 1 1e3 42"  # type: ignore[arg-type]


# -- the same rule on every path ---------------------------------------------------------------


def test_the_loop_refuses_loose_arguments_and_the_model_can_correct_them() -> None:
    ran: list[tuple[bool, int]] = []

    @function(register_globally=False)
    def switch(on: bool, times: int) -> str:
        """Switch a light."""
        ran.append((on, times))
        return "done"

    provider = ScriptedProvider(
        [call("switch", on="yes", times="2"), call("switch", on=True, times=2.0), "ok"]
    )
    assert Runtime(provider).exec("Light on twice.", tools=[switch]) == "ok"
    assert ran == [(True, 2)]
    refusal = provider.requests[1].messages[-1]
    assert refusal.content.splitlines()[1:3] == [
        "- on: expected boolean",
        "- times: expected integer",
    ]


def test_run_tools_refuses_loose_arguments() -> None:
    tool = function(scalars, register_globally=False)
    results = run_tools_sync(
        [ToolCall("a", "scalars", {**GOOD, "flag": "true"}), ToolCall("b", "scalars", GOOD)],
        [tool],
    )
    assert results[0].is_error
    assert "- flag: expected boolean" in results[0].content
    assert not results[1].is_error


def test_a_hand_written_schema_is_checked_as_strictly() -> None:
    seen: list[Any] = []
    tool = Tool(
        name="count",
        parameters={
            "type": "object",
            "properties": {"n": {"type": "integer"}},
            "required": ["n"],
        },
        execute=seen.append,
    )
    for loose in ("1", True, 1.5):
        assert asyncio.run(tool.execute({"n": loose})).violations == ("n: expected integer",)
    assert not asyncio.run(tool.execute({"n": 2})).is_error
    assert seen == [{"n": 2}]


def refund(amount: int, notify: bool = False) -> str:
    """Refund an amount.

    Args:
        amount: In cents.
        notify: Tell the customer.
    """
    return f"refunded {amount}"


def test_a_choices_pick_with_loose_arguments_is_refused() -> None:
    loose = '{"call": "refund", "args": {"amount": "5"}}'
    provider = ScriptedProvider([loose, loose])
    with pytest.raises(DecisionError) as info:
        Runtime(provider).exec("Handle it.", tools=[], choices=[refund])
    assert "amount: expected integer" in str(info.value)
    provider = ScriptedProvider(['{"call": "refund", "args": {"amount": 5.0, "notify": true}}'])
    assert Runtime(provider).exec("Handle it.", tools=[], choices=[refund]) == "refunded 5"


class Census(pydantic.BaseModel):
    city: str
    population: int
    capital: bool
    founded: datetime.date


def test_a_structured_answer_is_checked_as_strictly_as_tool_arguments() -> None:
    loose = '{"city": "Paris", "population": "2100000", "capital": "yes", "founded": "0250-01-01"}'
    provider = ScriptedProvider([loose, loose])
    with pytest.raises(ValidationFailedError) as info:
        Runtime(provider).exec("Paris?", tools=[], response_format=Census)
    assert info.value.violations == ("population: expected integer", "capital: expected boolean")
    exact = '{"city": "Paris", "population": 2100000.0, "capital": true, "founded": "0250-01-01"}'
    answer = Runtime(ScriptedProvider([exact])).exec("Paris?", tools=[], response_format=Census)
    assert answer == Census(
        city="Paris", population=2_100_000, capital=True, founded=datetime.date(250, 1, 1)
    )


def test_a_submitted_structured_answer_is_checked_as_strictly() -> None:
    provider = ScriptedProvider(
        [
            call("submit_result", city="Paris", population=1, capital=1, founded="2000-01-01"),
            call("submit_result", city="Paris", population=1, capital=1, founded="2000-01-01"),
        ],
        native_structured_output=False,
    )
    with pytest.raises(ValidationFailedError) as info:
        Runtime(provider).exec("Paris?", tools=[], response_format=Census)
    assert info.value.violations == ("capital: expected boolean",)


def test_input_options_apply_to_values_the_schema_writes_as_strings() -> None:
    def book(day: datetime.date, shade: Shade, seats: int) -> None:
        """Book a day."""

    schema = derive_schema(
        book,
        input={
            "day": {"options": ["2026-12-24", "2026-12-31"]},
            "shade": {"options": ["dark"]},
            "seats": {"options": [1, 2]},
        },
    )
    assert schema.validate({"day": "2026-12-31", "shade": "dark", "seats": 2.0}) == {
        "day": datetime.date(2026, 12, 31),
        "shade": Shade.DARK,
        "seats": 2,
    }
    with pytest.raises(ArgumentsError) as info:
        schema.validate({"day": "2026-12-25", "shade": "light", "seats": True})
    assert info.value.violations == (
        "day: expected one of '2026-12-24', '2026-12-31'",
        "shade: expected one of 'dark'",
        "seats: expected integer",
    )


def _trimmed(value: Any) -> Any:
    return value.strip() if isinstance(value, str) else value


def test_a_users_before_validator_keeps_working_on_string_forms() -> None:
    def plan(
        day: Annotated[datetime.date, pydantic.BeforeValidator(_trimmed)],
        count: Annotated[int, pydantic.BeforeValidator(_trimmed)],
        pair: Annotated[tuple[int, int], pydantic.BeforeValidator(list)],
    ) -> None:
        """Plan a day."""

    schema = derive_schema(plan)
    assert schema.validate({"day": " 2026-12-01 ", "count": 2, "pair": [1, 2]}) == {
        "day": datetime.date(2026, 12, 1),
        "count": 2,
        "pair": (1, 2),
    }
    with pytest.raises(ArgumentsError) as info:
        schema.validate({"day": " 2026-12-01 ", "count": " 2 ", "pair": [1, 2]})
    assert info.value.violations == ("count: expected integer",)
