"""Reading a signature into visible and hidden parameters, collecting every problem.

The decoration-time half of ``openprogram.schema``: one pass over the
parameters sorts out ``self``/``cls``, ``runtime``, the ``ToolContext`` one and
``input=``-hidden ones, resolves and checks the rest, and checks ``input=``,
the docstring and a ``parameters=`` override against the signature.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from openprogram.schema import _docs, _signature
from openprogram.schema._signature import EMPTY, Param
from openprogram.schema._walk import type_problems

__all__ = ["Reader", "Visible", "doc_problems", "input_problems", "override_problems"]

_BUILTIN_NAMES: dict[str, type] = {"str": str, "int": int, "float": float, "bool": bool}
_INPUT_KEYS = frozenset({"description", "options", "hidden"})
_JSON_SCALARS = (str, int, float, bool, type(None))


@dataclass(slots=True)
class Visible:
    """A parameter the model sees, as checked at decoration."""

    name: str
    annotation: Any
    default: Any
    options: tuple[Any, ...] | None = None
    description: str | None = None


class Reader:
    """Walks the parameters once, sorting them into hidden and visible, collecting problems."""

    def __init__(
        self, fn: Any, params: list[Param], inputs: Mapping[str, Any], *, override: bool
    ) -> None:
        self.fn = fn
        self.params = params
        self.inputs = inputs
        self.override = override
        self.problems: list[str] = []
        self.visible: list[Visible] = []
        self.positions: dict[str, int] = {}
        self.runtime_param: str | None = None
        self.context_param: str | None = None
        self.self_param: str | None = None
        self.has_var_keyword = False
        self._globals: dict[str, Any] | None = None
        self._locals: dict[str, Any] | None = None

    def read(self) -> None:
        for index, p in enumerate(self.params):
            if p.kind in (_signature.POSITIONAL_ONLY, _signature.POSITIONAL_OR_KEYWORD):
                self.positions[p.name] = index
            self._read_one(index, p)

    def _read_one(self, index: int, p: Param) -> None:
        if p.kind is _signature.VAR_POSITIONAL:
            self.problems.append(
                f"parameter *{p.name}: a model sends named arguments, so *{p.name} can never be "
                f"filled; replace it with a list parameter, e.g. {p.name}: list[str]"
            )
            return
        if p.kind is _signature.VAR_KEYWORD:
            self.has_var_keyword = True
            if not self.override:
                self.problems.append(
                    f"parameter **{p.name}: arbitrary keyword arguments have no schema; declare "
                    "each argument, or take a dict parameter, or pass parameters= (a JSON Schema)"
                )
            return
        if index == 0 and p.name in ("self", "cls"):
            self.self_param = p.name
            return
        if p.name == "runtime":
            self.runtime_param = p.name
            return
        if _signature.is_tool_context(p.annotation):
            self.context_param = p.name
            return
        if p.kind is _signature.POSITIONAL_ONLY:
            self.problems.append(
                f"parameter {p.name!r} is positional-only, but tool arguments are passed by name; "
                "remove the '/'"
            )
            return
        spec = self.inputs.get(p.name) if self.inputs else None
        if spec is not None and isinstance(spec, Mapping) and spec.get("hidden"):
            if p.default is EMPTY:
                self.problems.append(
                    f"parameter {p.name!r} is hidden by input= but has no default; "
                    "give it a default value"
                )
            return
        annotation = Any if self.override else self._annotation(p.name, p.annotation)
        if annotation is None:
            return
        options, description = _input_of(spec) if spec is not None else (None, None)
        self.visible.append(Visible(p.name, annotation, p.default, options, description))

    def _annotation(self, name: str, raw: Any) -> Any:
        """The resolved, checked annotation, or ``None`` after recording a problem."""
        if raw is EMPTY:
            return Any
        builtin = _BUILTIN_NAMES.get(raw) if isinstance(raw, str) else None
        if builtin is not None:
            if self._globals is None:
                self._globals = _signature.globals_of(self.fn)
            if raw not in self._globals:  # the common case, without eval or a walk
                return builtin
        try:
            tp = self._resolve(raw)
        except Exception as exc:  # noqa: BLE001 - evaluating user code may raise anything: report it as a problem
            self.problems.append(
                f"parameter {name!r}: cannot resolve annotation {raw!r} "
                f"({type(exc).__name__}: {exc}); import the type at module level"
            )
            return None
        found = type_problems(tp)
        self.problems.extend(f"parameter {name!r}: {p}" for p in found)
        return None if found else tp

    def _resolve(self, raw: Any) -> Any:
        if not isinstance(raw, str):
            return _signature.resolve(raw, {}, None)
        if self._globals is None:
            self._globals = _signature.globals_of(self.fn)
        try:
            return _signature.resolve(raw, self._globals, self._locals)
        except NameError:
            if self._locals is not None:
                raise
            # A type defined inside a function is only in the decorating frame's locals.
            self._locals = _signature.caller_namespace()
            return _signature.resolve(raw, self._globals, self._locals)


def _input_of(spec: Any) -> tuple[tuple[Any, ...] | None, str | None]:
    if not isinstance(spec, Mapping):
        return None, None
    options = spec.get("options")
    return (tuple(options) if options is not None else None), spec.get("description")


def input_problems(inputs: Any, params: list[Param]) -> list[str]:
    if inputs is None:
        return []
    if not isinstance(inputs, Mapping):
        return [f"input= must be a dict of parameter name -> options, got {type(inputs).__name__}"]
    names = [p.name for p in params]
    problems: list[str] = []
    for pname, spec in inputs.items():
        where = f"input[{pname!r}]"
        if pname not in names:
            problems.append(
                f"{where}: no such parameter (parameters: {', '.join(names) or 'none'})"
            )
        if not isinstance(spec, Mapping):
            problems.append(
                f"{where}: expected a dict like {{'description': ..., 'options': [...]}}"
            )
            continue
        unknown = sorted(set(spec) - _INPUT_KEYS)
        if unknown:
            problems.append(
                f"{where}: unknown keys {unknown} (allowed: description, hidden, options)"
            )
        options = spec.get("options")
        if options is not None and (
            isinstance(options, str | bytes | Mapping)
            or not isinstance(options, Sequence)
            or not options
            or not all(isinstance(o, _JSON_SCALARS) for o in options)
        ):
            problems.append(f"{where}: options must be a non-empty list of str/int/float/bool/None")
        desc = spec.get("description")
        if desc is not None and not isinstance(desc, str):
            problems.append(f"{where}: description must be a string")
    return problems


def doc_problems(doc: str | None, params: list[Param]) -> list[str]:
    if not doc:
        return []
    strangers = _docs.documented_names_outside(doc, {p.name for p in params})
    plain = ", ".join(p.name for p in params) or "none"
    return [
        f"docstring documents parameter {s!r}, which is not in the signature "
        f"(parameters: {plain}); fix the docstring or the signature"
        for s in strangers
    ]


def override_problems(override: dict[str, Any], params: list[Param], reader: Reader) -> list[str]:
    if override.get("type") != "object":
        return ['parameters= must be a JSON Schema object: {"type": "object", "properties": {...}}']
    props = override.get("properties", {})
    if not isinstance(props, Mapping):
        return ["parameters= 'properties' must be a dict of name -> JSON Schema"]
    problems: list[str] = []
    hidden = {reader.runtime_param, reader.context_param, "self", "cls"}
    names = {p.name for p in params}
    if not reader.has_var_keyword:
        problems.extend(
            f"parameters= defines {k!r}, which is not a parameter of the function; "
            "rename it or add the parameter"
            for k in props
            if k not in names
        )
    for v in reader.visible:
        if v.default is EMPTY and v.name not in props and v.name not in hidden:
            problems.append(
                f"parameter {v.name!r} has no default but parameters= does not define it; "
                "add it to 'properties' (and 'required')"
            )
    return problems
