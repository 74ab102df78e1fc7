"""Property tests: derived schemas accept exactly what the validator accepts.

Hypothesis builds random signatures from the mapping table (scalars, Literal,
Enum, lists, tuples, sets, dicts, optionals, models, dataclasses, TypedDicts,
``Annotated`` constraints, nested), then:

* every JSON instance generated *from the derived schema* validates, gives
  the same Python values pydantic gives for each parameter's own type, and
  calls the function;
* for arbitrary JSON arguments, the validator accepts exactly what the JSON
  Schema accepts (``jsonschema`` is the oracle), and every rejection names a
  real path.
"""

from __future__ import annotations

import dataclasses
import enum
import json
import keyword
from typing import Annotated, Any, Literal, NotRequired

import jsonschema
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import BaseModel, Field, TypeAdapter
from typing_extensions import TypedDict

from openprogram.exceptions import SchemaError
from openprogram.schema import ArgumentsError, derive_schema
from openprogram.testing import example_value
from openprogram.testing.strategies import from_json_schema


class Shade(enum.Enum):
    LIGHT = "light"
    DARK = "dark"


class Level(enum.IntEnum):
    LOW = 1
    HIGH = 2


class Place(BaseModel):
    name: str
    rank: int | None = None


@dataclasses.dataclass
class Size:
    width: float
    height: float = 1.0


class Flags(TypedDict):
    on: bool
    note: NotRequired[str]


SCALARS = [
    str,
    int,
    float,
    bool,
    Literal["a", "b", "c"],
    Literal[1, 2],
    Literal[0, True],  # JSON tells false from 0 and true from 1; Python does not
    Shade,
    Level,
    Annotated[int, Field(ge=0, le=100)],
    Annotated[str, Field(max_length=8)],
]
OBJECTS = [Place, Size, Flags]
HASHABLE = [str, int, bool, Literal["a", "b", "c"], Shade]


def types_() -> st.SearchStrategy[Any]:
    leaves = st.sampled_from(SCALARS + OBJECTS)
    return st.recursive(
        leaves,
        lambda inner: st.one_of(
            inner.map(lambda t: list[t]),  # type: ignore[valid-type]
            inner.map(lambda t: tuple[t, ...]),  # type: ignore[valid-type]
            st.sampled_from(HASHABLE).map(lambda t: set[t]),  # type: ignore[valid-type]
            inner.map(lambda t: dict[str, t]),  # type: ignore[valid-type]
            inner.map(lambda t: t | None),
        ),
        max_leaves=4,
    )


NAMES = st.from_regex(r"[a-z][a-z0-9_]{0,8}", fullmatch=True).filter(
    lambda n: not keyword.iskeyword(n) and n not in {"self", "cls", "runtime"}
)


@st.composite
def signatures(draw: st.DrawFn) -> list[tuple[str, Any, bool]]:
    """(name, type, optional) per parameter; optional ones are ``T | None = None``."""
    names = draw(st.lists(NAMES, min_size=1, max_size=4, unique=True))
    return [(n, draw(types_()), draw(st.booleans())) for n in names]


def make_function(sig: list[tuple[str, Any, bool]]) -> Any:
    """A real function with that signature, returning the arguments it got."""
    namespace: dict[str, Any] = {"Any": Any}
    params = []
    for i, (name, tp, optional) in enumerate(sig):
        namespace[f"T{i}"] = tp | None if optional else tp
        params.append(f"{name}: T{i} = None" if optional else f"{name}: T{i}")
    # Required parameters first: Python forbids a required one after a default.
    params.sort(key=lambda p: "=" in p)
    source = (
        f"def generated({', '.join(params)}):\n    '''Generated.'''\n    return dict(locals())\n"
    )
    exec(source, namespace)  # the signature itself is what is under test
    return namespace["generated"]


RELAXED = settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


@RELAXED
@given(sig=signatures(), data=st.data())
def test_instances_of_the_schema_validate_and_call(
    sig: list[tuple[str, Any, bool]], data: st.DataObject
) -> None:
    fn = make_function(sig)
    schema = derive_schema(fn)
    params = schema.parameters
    jsonschema.Draft202012Validator.check_schema(params)
    instance = data.draw(from_json_schema(params), label="arguments")
    jsonschema.validate(instance, params, cls=jsonschema.Draft202012Validator)
    kwargs = schema.validate(instance)
    got = fn(**kwargs)
    for name, tp, optional in sig:
        if name in instance:
            expected = TypeAdapter(tp | None if optional else tp).validate_python(instance[name])
            assert got[name] == expected
        else:
            assert optional
            assert got[name] is None


JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-5, 200)
    | st.floats(allow_nan=False)
    | st.text(max_size=4),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3)
    ),
    max_leaves=6,
)


@RELAXED
@given(sig=signatures(), data=st.data())
def test_arguments_are_accepted_iff_the_json_schema_accepts_them(
    sig: list[tuple[str, Any, bool]], data: st.DataObject
) -> None:
    """The validator is exactly as strict as the schema the model is shown (jsonschema decides)."""
    fn = make_function(sig)
    schema = derive_schema(fn)
    names = [name for name, _, _ in sig]
    keys = st.sampled_from([*names, "unknown"])
    args = data.draw(st.dictionaries(keys, JSON, max_size=len(names) + 1), label="arguments")
    schema_ok = jsonschema.Draft202012Validator(schema.parameters).is_valid(args)
    kwargs, violations = _validated(schema, args)
    if kwargs is None:
        assert not schema_ok, f"refused what the schema accepts: {violations}"
        assert violations
        for violation in violations:
            head = violation.split(":", 1)[0].split(".", 1)[0].split("[", 1)[0]
            assert head in {*names, "unknown", "(root)"}, violation
        return
    assert schema_ok, f"accepted what the schema refuses: {args!r}"
    fn(**kwargs)


def _validated(schema: Any, args: dict[str, Any]) -> tuple[dict[str, Any] | None, tuple[str, ...]]:
    try:
        return schema.validate(args), ()
    except ArgumentsError as exc:
        return None, exc.violations


# Values a model confuses with each other: each JSON type, and strings that lax parsing
# would read as another type.
CONFUSABLES = [
    "1", "1.5", "1e3", "true", "yes", "", "a", "light", "2024-05-01",
    0, 1, 2, 100, 101, -1, 1.0, 2.0, 1.5, 1e3, -0.0, True, False, None,
    [], {}, ["a", "a"], [1, 1.0],
]  # fmt: skip


def _places(value: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    found = [path]
    if isinstance(value, dict):
        for key, item in value.items():
            found.extend(_places(item, (*path, key)))
    elif isinstance(value, list):
        for i, item in enumerate(value):
            found.extend(_places(item, (*path, i)))
    return found


def _replaced(value: Any, path: tuple[Any, ...], new: Any) -> Any:
    if not path:
        return new
    copy = dict(value) if isinstance(value, dict) else list(value)
    copy[path[0]] = _replaced(value[path[0]], path[1:], new)
    return copy


@RELAXED
@given(sig=signatures(), data=st.data())
def test_valid_arguments_with_one_confusable_value_are_judged_like_the_schema(
    sig: list[tuple[str, Any, bool]], data: st.DataObject
) -> None:
    """Near misses (a "1" for 1, a 1 for true, 2.0 for 2, a repeated set item) at any depth."""
    fn = make_function(sig)
    schema = derive_schema(fn)
    instance = data.draw(from_json_schema(schema.parameters), label="valid arguments")
    places = [p for p in _places(instance) if p]
    if not places:
        return
    where = data.draw(st.sampled_from(places), label="where")
    args = _replaced(instance, where, data.draw(st.sampled_from(CONFUSABLES), label="value"))
    schema_ok = jsonschema.Draft202012Validator(schema.parameters).is_valid(args)
    kwargs, violations = _validated(schema, args)
    if kwargs is None:
        assert not schema_ok, f"refused what the schema accepts: {violations}"
        return
    assert schema_ok, f"accepted what the schema refuses: {args!r}"
    fn(**kwargs)


@pytest.mark.parametrize("tp", SCALARS + OBJECTS, ids=repr)
def test_each_leaf_type_round_trips_one_example(tp: Any) -> None:
    fn = make_function([("value", tp, False)])
    schema = derive_schema(fn)

    @settings(max_examples=10, deadline=None)
    @given(from_json_schema(schema.parameters))
    def check(instance: dict[str, Any]) -> None:
        assert fn(**schema.validate(instance))["value"] == TypeAdapter(tp).validate_python(
            instance["value"]
        )

    check()


def _docstring(style: str, names: list[str], prose: str) -> str:
    if style == "google":
        body = "".join(f"        {n}: About {n}.\n            More: {n}.\n" for n in names)
        return (
            f"Summary.\n\n    {prose}\n\n    Args:\n{body}\n    Returns:\n        Something.\n    "
        )
    if style == "numpy":
        body = "".join(f"    {n} : int\n        About {n}.\n" for n in names)
        return f"Summary.\n\n    {prose}\n\n    Parameters\n    ----------\n{body}\n    "
    if style == "rest":
        body = "".join(f"    :param {n}: About {n}.\n" for n in names)
        return f"Summary.\n\n    {prose}\n\n{body}    :returns: Something.\n    "
    body = "".join(f"    @param {n}: About {n}.\n" for n in names)
    return f"Summary.\n\n    {prose}\n\n{body}    @return: Something.\n    "


@settings(max_examples=60, deadline=None)
@given(
    style=st.sampled_from(["google", "numpy", "rest", "epydoc"]),
    documented=st.lists(NAMES, max_size=4, unique=True),
    params=st.lists(NAMES, min_size=1, max_size=4, unique=True),
    prose=st.sampled_from(["Plain prose.", "Note: prose with a colon.", "See: x (y): z."]),
)
def test_cheap_docstring_check_agrees_with_the_parser(
    style: str, documented: list[str], params: list[str], prose: str
) -> None:
    """The decoration-time scan reports exactly the strangers docstring_parser finds."""
    fn = make_function([(p, int, False) for p in params])
    fn.__doc__ = _docstring(style, documented, prose)
    strangers = [d for d in documented if d not in params]
    if not strangers:
        derive_schema(fn)
        return
    with pytest.raises(SchemaError) as err:
        derive_schema(fn)
    assert [p.split("'")[1] for p in err.value.problems] == strangers


SIMPLE = st.recursive(
    st.sampled_from([str, int, float, bool, Any, Literal["x", "y"], Literal[1, 2], Literal[True]]),
    lambda inner: (
        inner.map(lambda t: list[t])
        | inner.filter(lambda t: t is not Any).map(  # type: ignore[valid-type]
            lambda t: t | None
        )
    ),
    max_leaves=3,
)


@settings(max_examples=80, deadline=None)
@given(
    types=st.lists(st.tuples(SIMPLE, st.booleans(), st.booleans()), min_size=1, max_size=4),
)
def test_simple_signatures_get_the_same_schema_without_pydantic(
    types: list[tuple[Any, bool, bool]],
) -> None:
    """Simple signatures take a pydantic-free path; it must match the pydantic one exactly.

    A parameter of a type only pydantic handles (a set) forces the pydantic path for the
    same signature; with that parameter taken out, both schemas must be identical.
    """
    namespace: dict[str, Any] = {}
    params, doc = [], []
    for i, (tp, optional, documented) in enumerate(types):
        namespace[f"T{i}"] = tp
        params.append(f"p{i}: T{i} = None" if optional else f"p{i}: T{i}")
        if documented:
            doc.append(f"        p{i}: About p{i}.\n")
    params.sort(key=lambda p: "=" in p)
    body = (
        f"    '''Summary.\n\n    Args:\n{''.join(doc)}    '''\n" if doc else "    '''Summary.'''\n"
    )
    simple_src = f"def simple({', '.join(params)}):\n{body}"
    forced_src = f"def forced({', '.join(params)}, zz: set[str] = None):\n{body}"
    exec(simple_src + forced_src, namespace)  # the signatures themselves are under test
    fast = derive_schema(namespace["simple"]).parameters
    slow = derive_schema(namespace["forced"]).parameters
    del slow["properties"]["zz"]
    assert json.dumps(fast) == json.dumps(slow)


@RELAXED
@given(sig=signatures(), seed=st.integers(0, 2**32))
def test_example_values_of_derived_schemas_validate_and_call(
    sig: list[tuple[str, Any, bool]], seed: int
) -> None:
    """The Hypothesis-free generator (used by SchemaProvider) gives valid arguments too."""
    fn = make_function(sig)
    schema = derive_schema(fn)
    instance = example_value(schema.parameters, seed=seed)
    jsonschema.validate(instance, schema.parameters, cls=jsonschema.Draft202012Validator)
    fn(**schema.validate(instance))
