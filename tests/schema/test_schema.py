"""Schema derivation: the type mapping, hidden parameters, docstrings, errors, validation.

Schemas and error texts are compared with snapshot files in tests/snapshots/;
run with OPENPROGRAM_UPDATE_SNAPSHOTS=1 to rewrite them after a deliberate change.
"""

from __future__ import annotations

import dataclasses
import datetime
import enum
import functools
import json
import os
import re
import socket
import subprocess
import sys
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any, Literal, NotRequired, Optional

import pytest
from pydantic import BaseModel, Field
from typing_extensions import TypedDict

from openprogram.exceptions import SchemaError, UserError
from openprogram.schema import ArgumentsError, derive_schema, json_schema_violations
from openprogram.tools import ToolContext

SNAPSHOTS = Path(__file__).parent / "snapshots"


def assert_snapshot(name: str, actual: str) -> None:
    """Compare ``actual`` with tests/snapshots/``name`` (rewrite it when asked to)."""
    path = SNAPSHOTS / name
    if os.environ.get("OPENPROGRAM_UPDATE_SNAPSHOTS") == "1":
        path.parent.mkdir(exist_ok=True)
        path.write_text(actual)
        return
    assert path.exists(), f"missing snapshot {path}; run with OPENPROGRAM_UPDATE_SNAPSHOTS=1"
    assert actual == path.read_text(), (
        f"{name} changed; if intended, rerun with OPENPROGRAM_UPDATE_SNAPSHOTS=1"
    )


def dumps(value: Any) -> str:
    return json.dumps(value, indent=2) + "\n"


# -- types used by the signatures below ------------------------------------------------------


class Color(enum.Enum):
    RED = "red"
    BLUE = "blue"


class Priority(enum.IntEnum):
    LOW = 1
    HIGH = 2


class Address(BaseModel):
    """A postal address."""

    city: str
    zip_code: str | None = None


@dataclasses.dataclass
class Point:
    x: float
    y: float = 0.0


class Options(TypedDict):
    verbose: bool
    depth: NotRequired[int]


class Node(BaseModel):
    """A tree node."""

    label: str
    children: list[Node] = []


def every_mapping(  # noqa: PLR0917 - one parameter per row of the table
    s: str,
    i: int,
    f: float,
    b: bool,
    n: None,
    items: list[int],
    pair: tuple[str, int],
    many: tuple[float, ...],
    tags: set[str],
    scores: dict[str, float],
    unit: Literal["celsius", "fahrenheit"],
    color: Color,
    prio: Priority,
    maybe: int | None,
    either: int | str,
    address: Address,
    point: Point,
    options: Options,
    tree: Node,
    when: datetime.date,
    count: Annotated[int, Field(ge=1, le=10, description="How many, 1 to 10.")] = 3,
    name: Optional[str] = None,  # noqa: UP045 - the typing spelling must work too
) -> None:
    """Exercise every row of the mapping table.

    Longer description that follows the summary.

    Args:
        s: A string.
        count: Docstring text that the Field description overrides.
        name: An optional name.
    """


def test_every_mapping_row_matches_snapshot() -> None:
    schema = derive_schema(every_mapping)
    assert_snapshot("every_mapping.json", dumps(schema.parameters))
    assert schema.description == (
        "Exercise every row of the mapping table.\n\nLonger description that follows the summary."
    )


def test_scalar_rows() -> None:
    props = derive_schema(every_mapping).parameters["properties"]
    assert props["s"] == {"description": "A string.", "type": "string"}
    assert props["i"] == {"type": "integer"}
    assert props["f"] == {"type": "number"}
    assert props["b"] == {"type": "boolean"}
    assert props["n"] == {"type": "null"}
    assert props["tags"] == {"items": {"type": "string"}, "type": "array", "uniqueItems": True}
    assert props["scores"] == {"additionalProperties": {"type": "number"}, "type": "object"}
    assert props["unit"] == {"enum": ["celsius", "fahrenheit"], "type": "string"}
    assert props["color"] == {"enum": ["red", "blue"], "type": "string"}
    assert props["maybe"] == {"anyOf": [{"type": "integer"}, {"type": "null"}]}
    assert props["count"]["description"] == "How many, 1 to 10."
    assert props["count"]["default"] == 3
    assert (props["count"]["minimum"], props["count"]["maximum"]) == (1, 10)


def test_top_level_object_forbids_extra_and_lists_required() -> None:
    params = derive_schema(every_mapping).parameters
    assert params["type"] == "object"
    assert params["additionalProperties"] is False
    assert "count" not in params["required"]
    assert "name" not in params["required"]
    assert params["required"][:3] == ["s", "i", "f"]


def test_recursive_model_keeps_its_definition_and_others_are_inlined() -> None:
    params = derive_schema(every_mapping).parameters
    assert set(params["$defs"]) == {"Node"}
    assert params["properties"]["tree"] == {"$ref": "#/$defs/Node"}
    assert params["properties"]["address"]["properties"]["city"] == {"type": "string"}
    assert "title" not in params["properties"]["address"]


def test_string_annotations_resolve() -> None:
    def f(city: "str", days: "list[int] | None" = None) -> str:  # noqa: UP037 - testing quotes
        """Quoted annotations."""
        return city

    props = derive_schema(f).parameters["properties"]
    assert props["city"] == {"type": "string"}
    assert props["days"]["anyOf"][0] == {"items": {"type": "integer"}, "type": "array"}


def test_class_defined_inside_a_function_resolves_under_future_annotations() -> None:
    class Local(BaseModel):
        value: int

    def f(item: Local) -> int:
        """Uses a local class."""
        return item.value

    schema = derive_schema(f)
    assert schema.validate({"item": {"value": 3}}) == {"item": Local(value=3)}


# -- hidden parameters ----------------------------------------------------------------------


def test_hidden_parameters_are_left_out_and_reported() -> None:
    class Service:
        def lookup(self, query: str, runtime: Any, ctx: ToolContext, limit: int = 5) -> str:
            """Look something up."""
            return query

    schema = derive_schema(Service.lookup)
    assert list(schema.parameters["properties"]) == ["query", "limit"]
    assert (schema.runtime_param, schema.context_param, schema.self_param) == (
        "runtime",
        "ctx",
        "self",
    )
    assert schema.validate({"query": "q"}) == {"query": "q"}


def test_runtime_parameter_is_hidden_whatever_its_annotation() -> None:
    def f(x: int, runtime: UndefinedRuntimeType) -> int:  # type: ignore[name-defined]  # noqa: F821
        """The runtime annotation is never resolved."""
        return x

    assert derive_schema(f).runtime_param == "runtime"


def test_bound_method_drops_self_and_shifts_positions() -> None:
    class Service:
        def lookup(self, runtime: Any, query: str) -> str:
            """Look something up."""
            return query

    unbound = derive_schema(Service.lookup)
    bound = derive_schema(Service().lookup)
    assert unbound.positional_index("runtime") == 1
    assert bound.positional_index("runtime") == 0
    assert bound.self_param is None
    assert bound.parameters == unbound.parameters
    assert unbound.bound().positional_index("runtime") == 0
    assert bound.positional_index("nope") == sys.maxsize


def test_input_hides_describes_and_restricts() -> None:
    def f(topic: str, style: str = "short", secret: str = "s3cret") -> str:
        """Write about a topic."""
        return topic

    schema = derive_schema(
        f,
        input={
            "topic": {"description": "What to write about."},
            "style": {"options": ["short", "long"]},
            "secret": {"hidden": True},
        },
    )
    props = schema.parameters["properties"]
    assert list(props) == ["topic", "style"]
    assert props["topic"]["description"] == "What to write about."
    assert props["style"]["enum"] == ["short", "long"]
    assert schema.validate({"topic": "t", "style": "long"}) == {"topic": "t", "style": "long"}
    with pytest.raises(ArgumentsError) as err:
        schema.validate({"topic": "t", "style": "medium", "secret": "x"})
    assert err.value.violations == (
        "style: expected one of 'short', 'long'",
        "secret: unexpected argument (allowed: topic, style)",
    )


def test_input_description_wins_over_docstring() -> None:
    def f(topic: str) -> str:
        """Write.

        Args:
            topic: From the docstring.
        """
        return topic

    props = derive_schema(f, input={"topic": {"description": "From input."}}).parameters[
        "properties"
    ]
    assert props["topic"]["description"] == "From input."


# -- one SchemaError listing every problem --------------------------------------------------


def broken(
    *args: int,
    sock: socket.socket,
    ref: list[MissingType],  # type: ignore[name-defined]  # noqa: F821
    keyed: dict[int, str],
    call: Callable[[], int],
    **kwargs: Any,
) -> None:
    """Broken in every way.

    Args:
        ghost: Documented but not a parameter.
    """


def test_schema_error_lists_every_problem() -> None:
    with pytest.raises(SchemaError) as err:
        derive_schema(broken)
    assert err.value.qualname == "tests.test_schema.broken" or err.value.qualname.endswith(
        "test_schema.broken"
    )
    assert len(err.value.problems) == 7
    text = str(err.value).replace(err.value.qualname, "<qualname>")
    assert_snapshot("schema_error_broken.txt", text + "\n")


def test_schema_error_is_a_type_error_and_user_error() -> None:
    with pytest.raises(TypeError):
        derive_schema(broken)
    with pytest.raises(UserError):
        derive_schema(broken)


@dataclasses.dataclass
class Account:
    login: Annotated[str, Field(pattern=r"^(?<!-)[a-z]+$")]


def test_a_pattern_the_validator_cannot_compile_fails_at_decoration() -> None:
    def sign_up(
        password: Annotated[str, Field(pattern=r"^(?=.*\d).{8,}$")],
        account: Account,
        pin: Annotated[str, Field(pattern=r"^(\d)\1{3}$")] = "1111",
    ) -> str:
        """Create an account."""
        return password

    with pytest.raises(SchemaError) as err:
        derive_schema(sign_up)
    assert [p.split(":", 1)[0] for p in err.value.problems] == [
        "parameter 'password'",
        "parameter 'account'",
        "parameter 'pin'",
    ]
    password, account, pin = err.value.problems
    assert "pattern '^(?=.*\\\\d).{8,}$' cannot be checked: look-around" in password
    assert "pattern=re.compile(r'...')" in password
    assert account.startswith("parameter 'account': field Account.login: pattern '^(?<!-)[a-z]+$'")
    assert "backreferences are not supported" in pin


def test_a_compiled_pattern_with_look_around_is_checked_with_python_re() -> None:
    def set_password(
        password: Annotated[str, Field(pattern=re.compile(r"^(?=.*\d).{8,}$"))],
    ) -> str:
        """Set the password."""
        return password

    schema = derive_schema(set_password)
    assert schema.parameters["properties"]["password"]["pattern"] == r"^(?=.*\d).{8,}$"
    assert schema.validate({"password": "secret42"}) == {"password": "secret42"}
    with pytest.raises(ArgumentsError, match="should match pattern"):
        schema.validate({"password": "no digits"})


def test_input_problems_are_reported_with_the_signature_ones() -> None:
    def f(a: int, b: int) -> int:
        """Add."""
        return a + b

    with pytest.raises(SchemaError) as err:
        derive_schema(
            f,
            input={"b": {"hidden": True}, "c": {}, "a": {"options": [], "colour": 1}},
        )
    assert err.value.problems == (
        "parameter 'b' is hidden by input= but has no default; give it a default value",
        "input['c']: no such parameter (parameters: a, b)",
        "input['a']: unknown keys ['colour'] (allowed: description, hidden, options)",
        "input['a']: options must be a non-empty list of str/int/float/bool/None",
    )


def test_positional_only_and_unreadable_signatures() -> None:
    def f(a: int, /, b: int) -> int:
        """Positional-only."""
        return a + b

    with pytest.raises(SchemaError, match="positional-only"):
        derive_schema(f)
    with pytest.raises(SchemaError, match="not callable"):
        derive_schema(42)  # type: ignore[arg-type]


def test_incomplete_pydantic_model_is_reported() -> None:
    class Pending(BaseModel):
        later: LaterType  # type: ignore[name-defined]  # noqa: F821

    def f(p: Pending) -> None:
        """Uses a model that is not fully defined."""

    with pytest.raises(SchemaError, match=r"Pending\.model_rebuild\(\)"):
        derive_schema(f)


def test_bad_field_inside_a_dataclass_is_reported_with_its_path() -> None:
    @dataclasses.dataclass
    class Holder:
        sock: socket.socket

    def f(h: Holder) -> None:
        """Nested bad field."""

    with pytest.raises(
        SchemaError, match=r"parameter 'h': field Holder\.sock: unsupported annotation"
    ):
        derive_schema(f)


# -- descriptions and docstring styles ------------------------------------------------------


def google(city: str, days: int = 1) -> str:
    """Weather for a city.

    Uses the forecast service.

    Args:
        city (str): City name.
        days: Days ahead,
            1 to 14.

    Returns:
        The forecast.
    """
    return city


def numpy(city: str, days: int = 1) -> str:
    """Weather for a city.

    Uses the forecast service.

    Parameters
    ----------
    city : str
        City name.
    days : int, optional
        Days ahead,
        1 to 14.

    Returns
    -------
    str
        The forecast.
    """
    return city


def rest(city: str, days: int = 1) -> str:
    """Weather for a city.

    Uses the forecast service.

    :param str city: City name.
    :param days: Days ahead,
        1 to 14.
    :returns: The forecast.
    """
    return city


def epydoc(city: str, days: int = 1) -> str:
    """Weather for a city.

    Uses the forecast service.

    @param city: City name.
    @type city: str
    @param days: Days ahead,
        1 to 14.
    @return: The forecast.
    """
    return city


@pytest.mark.parametrize("fn", [google, numpy, rest, epydoc], ids=lambda f: f.__name__)
def test_docstring_styles_give_the_same_schema(fn: Callable[..., str]) -> None:
    schema = derive_schema(fn)
    assert schema.description == "Weather for a city.\n\nUses the forecast service."
    props = schema.parameters["properties"]
    assert props["city"]["description"] == "City name."
    assert props["days"]["description"] == "Days ahead,\n1 to 14."


@pytest.mark.parametrize(
    "doc",
    [
        "Summary.\n\n    Args:\n        ghost: Not a parameter.\n    ",
        "Summary.\n\n    Parameters\n    ----------\n    ghost : int\n        Not a param.\n    ",
        "Summary.\n\n    :param ghost: Not a parameter.\n    ",
        "Summary.\n\n    @param ghost: Not a parameter.\n    ",
    ],
    ids=["google", "numpy", "rest", "epydoc"],
)
def test_docstring_naming_a_missing_parameter_is_an_error_in_every_style(doc: str) -> None:
    def f(city: str) -> str:
        return city

    f.__doc__ = doc
    with pytest.raises(SchemaError) as err:
        derive_schema(f)
    assert err.value.problems == (
        "docstring documents parameter 'ghost', which is not in the signature "
        "(parameters: city); fix the docstring or the signature",
    )


def test_colon_lines_in_prose_are_not_mistaken_for_parameters() -> None:
    def f(city: str) -> str:
        """Summary.

        Args:
            city: The city.
                Note: deeper lines with colons are descriptions.

        Example:
            f("Paris")
        """
        return city

    assert derive_schema(f).parameters["properties"]["city"]["description"].startswith("The city.")


def test_documented_star_args_count_as_their_parameter() -> None:
    def f(city: str, **extra: Any) -> str:
        """Summary.

        Args:
            city: The city.
            **extra: More.
        """
        return city

    schema = derive_schema(
        f, parameters={"type": "object", "properties": {"city": {"type": "string"}}}
    )
    assert schema.parameters["properties"] == {"city": {"type": "string"}}


def test_empty_docstring_falls_back_to_the_name_with_a_warning() -> None:
    def quiet(x: int) -> int:
        return x

    with pytest.warns(UserWarning, match="quiet has no description"):
        schema = derive_schema(quiet)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert schema.description == "quiet"  # warned once, at derive time


def test_docstring_with_only_sections_warns_too() -> None:
    def f(x: int) -> int:
        """Args:
        x: A number.
        """
        return x

    with pytest.warns(UserWarning, match="no description"):
        assert derive_schema(f).description == "f"


def test_blank_explicit_description_warns_and_falls_back() -> None:
    def f(x: int) -> int:
        """Doc."""
        return x

    with pytest.warns(UserWarning, match="no description"):
        assert derive_schema(f, description="  ", name="renamed").description == "renamed"


def test_explicit_name_and_description_are_used() -> None:
    schema = derive_schema(google, name="weather", description="Custom.")
    assert (schema.name, schema.description) == ("weather", "Custom.")


# -- parameters= override ---------------------------------------------------------------------


def test_parameters_override_is_returned_as_given_and_validated_with_json_schema() -> None:
    spec = {"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]}

    def search(**kwargs: Any) -> str:
        """Search."""
        return str(kwargs)

    schema = derive_schema(search, parameters=spec)
    assert schema.parameters == spec
    assert schema.validate({"q": "x"}) == {"q": "x"}
    with pytest.raises(ArgumentsError) as err:
        schema.validate({"q": 1})
    assert err.value.violations == ("q: expected string",)


def test_parameters_override_is_checked_against_the_signature() -> None:
    def f(a: int, b: int = 0) -> int:
        """Add."""
        return a + b

    with pytest.raises(SchemaError) as err:
        derive_schema(f, parameters={"type": "object", "properties": {"c": {"type": "integer"}}})
    assert err.value.problems == (
        "parameters= defines 'c', which is not a parameter of the function; "
        "rename it or add the parameter",
        "parameter 'a' has no default but parameters= does not define it; "
        "add it to 'properties' (and 'required')",
    )
    with pytest.raises(SchemaError, match="JSON Schema object"):
        derive_schema(f, parameters={"type": "array"})


# -- validation -------------------------------------------------------------------------------


def test_validation_returns_python_values_ready_for_the_call() -> None:
    schema = derive_schema(every_mapping)
    args = {
        "s": "x", "i": 1, "f": 1.5, "b": True, "n": None, "items": [1], "pair": ["a", 1],
        "many": [1.0], "tags": ["a", "b"], "scores": {"a": 1.0}, "unit": "celsius",
        "color": "red", "prio": 2, "maybe": None, "either": "s", "address": {"city": "P"},
        "point": {"x": 1}, "options": {"verbose": True}, "when": "2024-05-01",
        "tree": {"label": "r", "children": [{"label": "c"}]},
    }  # fmt: skip
    kwargs = schema.validate(args)
    assert kwargs["pair"] == ("a", 1)
    assert kwargs["tags"] == {"a", "b"}
    assert kwargs["color"] is Color.RED
    assert kwargs["prio"] is Priority.HIGH
    assert kwargs["address"] == Address(city="P")
    assert kwargs["point"] == Point(x=1.0)
    assert kwargs["tree"].children[0].label == "c"
    assert kwargs["when"] == datetime.date(2024, 5, 1)
    assert "count" not in kwargs  # the function's own default applies
    every_mapping(**kwargs)


def test_every_violation_is_reported_as_path_and_message() -> None:
    schema = derive_schema(every_mapping)
    bad = {
        "s": 42, "i": "x", "b": [], "items": [1, "two"], "pair": ["a"], "unit": "kelvin",
        "color": "green", "either": [], "address": {"zip_code": 5}, "point": "p",
        "tree": {"label": "r", "children": [{"children": []}]}, "count": 0, "extra": 1,
    }  # fmt: skip
    with pytest.raises(ArgumentsError) as err:
        schema.validate(bad)
    assert_snapshot("violations_every_mapping.txt", "\n".join(err.value.violations) + "\n")
    assert "s: expected string" in err.value.violations
    assert "f: missing required argument" in err.value.violations
    assert "address.city: missing required field" in err.value.violations
    assert "items[1]: expected integer" in err.value.violations
    assert "either: expected integer or string" in err.value.violations
    assert "tree.children[0].label: missing required field" in err.value.violations


def test_seed_example_city_expected_string() -> None:
    def get_weather(city: str, units: Literal["celsius", "fahrenheit"] = "celsius") -> str:
        """Weather."""
        return city

    with pytest.raises(ArgumentsError) as err:
        derive_schema(get_weather).validate({"city": 42})
    assert err.value.violations == ("city: expected string",)
    assert str(err.value) == "city: expected string"


def test_union_member_that_failed_deeper_is_the_one_reported() -> None:
    def f(target: Address | int) -> None:
        """Union of an object and a scalar."""

    with pytest.raises(ArgumentsError) as err:
        derive_schema(f).validate({"target": {"zip_code": "1"}})
    assert err.value.violations == ("target.city: missing required field",)


def test_validation_of_non_object_arguments() -> None:
    with pytest.raises(ArgumentsError) as err:
        derive_schema(google).validate([1, 2])  # type: ignore[arg-type]
    assert err.value.violations == ("(root): expected object",)


# -- json_schema_violations ---------------------------------------------------------------------

SPEC = {
    "type": "object",
    "properties": {
        "city": {"type": "string"},
        "units": {"type": "string", "enum": ["celsius", "fahrenheit"]},
        "days": {"type": ["integer", "null"], "minimum": 1},
        "stops": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {"name": {"type": "string"}},
                "required": ["name"],
                "additionalProperties": False,
            },
        },
        "mode": {"anyOf": [{"type": "string"}, {"type": "integer"}]},
    },
    "required": ["city"],
    "additionalProperties": False,
}  # fmt: skip


def test_json_schema_violations_speak_the_same_dialect() -> None:
    value = {
        "units": "kelvin", "days": 0, "stops": [{"name": "a"}, {"x": 1}], "mode": [], "zz": 1,
    }  # fmt: skip
    assert json_schema_violations(SPEC, value) == [
        "city: missing required argument",
        "zz: unexpected argument (allowed: city, units, days, stops, mode)",
        "days: 0 is less than the minimum of 1",
        "mode: expected string or integer",
        "stops[1].name: missing required field",
        "stops[1].x: unexpected field",
        "units: expected 'celsius' or 'fahrenheit'",
    ]
    assert json_schema_violations(SPEC, {"city": "P"}) == []
    assert json_schema_violations(SPEC, [1]) == ["(root): expected object"]


def test_json_schema_violations_rejects_an_invalid_schema() -> None:
    with pytest.raises(UserError, match="invalid JSON Schema"):
        json_schema_violations({"type": "objekt"}, {})


# -- cheap decoration ---------------------------------------------------------------------------


def test_deriving_a_schema_builds_no_validator_until_first_use() -> None:
    code = (
        "import sys\n"
        "from openprogram.schema import derive_schema\n"
        "def f(city: str, days: int = 1) -> str:\n"
        "    '''Weather.\n\n    Args:\n        city: City.\n        days: Days.\n    '''\n"
        "    return city\n"
        "s = derive_schema(f)\n"
        "assert 'pydantic.type_adapter' not in sys.modules, 'built a validator at decoration'\n"
        "assert 'docstring_parser' not in sys.modules, 'parsed the docstring at decoration'\n"
        "assert s.validate({'city': 'P'}) == {'city': 'P'}\n"
        "assert 'pydantic.type_adapter' in sys.modules\n"
    )
    root = Path(__file__).resolve().parents[2]
    env = {**os.environ, "PYTHONPATH": str(root)}
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, check=False
    )
    assert done.returncode == 0, done.stderr


def test_the_schema_and_validator_are_built_once() -> None:
    schema = derive_schema(google)
    assert schema.parameters is schema.parameters


def test_partials_and_callable_objects() -> None:
    class Greeter:
        def __call__(self, name: str, punctuation: str = "!") -> str:
            """Greet someone by name."""
            return f"hi {name}{punctuation}"

    obj = derive_schema(Greeter())
    assert (obj.name, obj.description) == ("Greeter", "Greet someone by name.")
    assert list(obj.parameters["properties"]) == ["name", "punctuation"]

    part = derive_schema(functools.partial(google, days=3))
    assert (part.name, part.description.split("\n")[0]) == ("google", "Weather for a city.")
    assert part.parameters["properties"]["days"]["default"] == 3


async def _async_body(x: int) -> int:
    """Async."""
    return x


def test_async_functions_are_marked_async() -> None:
    assert derive_schema(_async_body).is_async
    assert not derive_schema(google).is_async


@pytest.mark.skipif(sys.version_info >= (3, 12), reason="typing.TypedDict works from 3.12 on")
def test_a_typing_typeddict_is_refused_at_decoration_on_311() -> None:
    from typing import TypedDict as StdTypedDict

    class StdPoint(StdTypedDict):
        x: int

    def where(p: StdPoint) -> int:
        """Where."""
        return p["x"]

    with pytest.raises(SchemaError, match="import TypedDict from typing_extensions"):
        derive_schema(where)
