"""Type hints + docstring -> JSON Schema + validator, for both decorators.

:func:`derive_schema` does only cheap work: it reads the signature, resolves
and structurally checks each annotation, and scans the docstring, raising one
:class:`~openprogram.exceptions.SchemaError` that lists *every* problem. The
pydantic validator, the JSON Schema and the parsed descriptions are built on
first use and cached on the :class:`FunctionSchema`, so decorating a thousand
functions stays cheap.

The modules: ``_derive`` (reading a function), ``_function`` (the schema it
gives), ``_read``, ``_signature`` and ``_walk`` (parameters and annotations,
and whether each type can have a schema), ``_docs`` (docstrings), ``_fast``,
``_build`` and ``_generator`` (the JSON Schema, without and with pydantic),
``_value`` (one value of any such type: a structured answer), ``_strict``,
``_literal`` and ``_errors`` (validation as the JSON Schema reads it, and its
messages).

Example:
    >>> def get_weather(city: str, days: int = 1) -> str:
    ...     '''Weather for a city.
    ...
    ...     Args:
    ...         city: City name.
    ...         days: Days ahead.
    ...     '''
    ...     return city
    >>> schema = derive_schema(get_weather)
    >>> schema.parameters["properties"]["city"]
    {'description': 'City name.', 'type': 'string'}
    >>> try:
    ...     schema.validate({"city": 42, "hours": 3})
    ... except ArgumentsError as exc:
    ...     print(exc.violations)
    ('city: expected string', 'hours: unexpected argument (allowed: city, days)')
"""

from __future__ import annotations

from openprogram.schema._derive import derive_schema
from openprogram.schema._errors import json_schema_violations
from openprogram.schema._function import ArgumentsError, FunctionSchema

__all__ = ["ArgumentsError", "FunctionSchema", "derive_schema", "json_schema_violations"]
