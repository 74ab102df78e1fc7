"""Law: any pydantic model round-trips: model -> schema -> generated valid JSON -> instance."""

from __future__ import annotations

import json
from typing import Annotated, Any, Literal

import pydantic
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from openprogram.structured import output_schema
from openprogram.testing.strategies import from_json_schema

_LEAVES: list[Any] = [
    str,
    int,
    float,
    bool,
    list[int],
    set[str],
    dict[str, int],
    str | None,
    Literal["red", "green", "blue"],
    Annotated[int, pydantic.Field(ge=0, le=100)],
    Annotated[str, pydantic.Field(min_length=1, max_length=8)],
    Annotated[list[float], pydantic.Field(max_length=3)],
]

_names = st.from_regex(r"[a-z][a-z0-9_]{0,8}", fullmatch=True).filter(
    lambda n: not n.startswith("model_")  # pydantic reserves the model_ namespace
)


@st.composite
def models(draw: st.DrawFn, depth: int = 2) -> type[pydantic.BaseModel]:
    """A random model class: leaf fields, optional defaults, and nested models."""
    kinds = st.sampled_from(_LEAVES)
    if depth > 0:
        kinds = st.one_of(kinds, models(depth - 1), models(depth - 1).map(lambda m: list[m]))  # type: ignore[valid-type]
    names = draw(st.lists(_names, min_size=1, max_size=5, unique=True))
    fields: dict[str, Any] = {}
    for name in names:
        kind = draw(kinds)
        optional = draw(st.booleans())
        fields[name] = (kind | None, None) if optional else (kind, ...)
    title = draw(st.from_regex(r"[A-Z][a-z]{1,6}", fullmatch=True))
    return pydantic.create_model(f"{title}{depth}", **fields)


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(model=models(), data=st.data())
def test_random_models_round_trip(model: type[pydantic.BaseModel], data: st.DataObject) -> None:
    out = output_schema(model)
    value = data.draw(from_json_schema(out.wire_schema), label="generated JSON")
    instance = out.parse(json.dumps(value))
    assert isinstance(instance, model)
    assert out.parse(instance.model_dump_json()) == instance


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(model=models(depth=1), data=st.data())
def test_wrapped_root_models_round_trip(
    model: type[pydantic.BaseModel], data: st.DataObject
) -> None:
    root = pydantic.RootModel[list[model]]  # type: ignore[valid-type]
    out = output_schema(root)
    assert out.wrapped
    value = data.draw(from_json_schema(out.wire_schema), label="generated JSON")
    instance = out.parse(json.dumps(value))
    assert isinstance(instance, root)
    assert instance == out.parse(json.dumps(value["result"]))
