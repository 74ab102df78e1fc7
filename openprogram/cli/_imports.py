"""Importing what the command line names: ``module`` and ``module:attr``, with the fix on a typo.

The current directory is importable (as with ``python -m``). A module name is
dotted (``examples.trip_planner``); a file path is refused with the dotted name
it probably means. A module that cannot be found, or an attribute the module
does not have, is a usage error (exit 2) naming the closest existing names; a
module that raises while it is imported is the user's code failing (exit 1,
with its traceback).
"""

from __future__ import annotations

import importlib
import inspect
import os
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

from openprogram.cli._errors import UserCodeError
from openprogram.cli._suggest import close_names, did_you_mean
from openprogram.exceptions import ConfigurationError

__all__ = ["TargetNotFoundError", "UnknownModuleError", "import_attribute", "import_user_module"]

_LISTED = 12
"""How many of a module's functions a "has no attribute" message lists."""


class TargetNotFoundError(ConfigurationError):
    """A module or attribute named on the command line does not exist (a usage error, exit 2)."""


class UnknownModuleError(TargetNotFoundError):
    """The module part does not name a module that exists (exit 2)."""


def import_user_module(module_name: str) -> ModuleType:
    """Import one of the user's modules, with the current directory importable.

    Raises:
        UnknownModuleError: ``module_name`` is not a dotted module name, or the
            module itself cannot be found.
        UserCodeError: The module raised while importing (an ``ImportError`` of a
            missing dependency included): that is the user's code failing.
    """
    _check_module_name(module_name)
    cwd = os.getcwd()
    if cwd not in sys.path:
        sys.path.insert(0, cwd)  # like `python -m`: the user's own modules are importable
    try:
        return importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        missing = exc.name or ""
        if missing and (module_name == missing or module_name.startswith(missing + ".")):
            raise UnknownModuleError(
                f"cannot import {module_name!r}: {exc}{_similar_modules(missing)}; check the "
                "spelling, and that the current directory or PYTHONPATH holds it"
            ) from exc
        raise UserCodeError(exc, f"importing {module_name}") from exc
    except (KeyboardInterrupt, SystemExit):
        raise
    # Whatever the user's module raises while it is imported (BaseException subclasses
    # included) is a failure of their code, reported with its traceback (exit 1).
    except BaseException as exc:
        raise UserCodeError(exc, f"importing {module_name}") from exc


def import_attribute(target: str) -> Any:
    """Import ``module:attr`` (``attr`` may be dotted) with the current directory importable.

    Raises:
        ConfigurationError: ``target`` does not look like ``module:attr``.
        UnknownModuleError: The module cannot be found.
        TargetNotFoundError: The module has no such attribute.
        UserCodeError: The module raised while importing.
    """
    module_name, sep, attr = target.partition(":")
    if not sep or not module_name or not attr:
        raise ConfigurationError(
            f"expected module:attribute (e.g. examples.trip_planner:plan_trip), got {target!r}"
        )
    obj: Any = import_user_module(module_name)
    where = module_name
    for part in attr.split("."):
        if not hasattr(obj, part):
            raise TargetNotFoundError(_no_attribute(target, where, obj, part))
        obj = getattr(obj, part)
        where = f"{where}.{part}"
    return obj


def _check_module_name(name: str) -> None:
    if all(part.isidentifier() for part in name.split(".")):
        return
    dotted = name.removeprefix("./").removesuffix(".py").replace("/", ".").replace("\\", ".")
    fix = (
        f"did you mean {dotted!r}? "
        if dotted != name and all(p.isidentifier() for p in dotted.split("."))
        else ""
    )
    raise UnknownModuleError(
        f"{name!r} is not a module name: {fix}name a module with dots (e.g. "
        "examples.trip_planner), as importable from the current directory or PYTHONPATH; "
        "file paths are not accepted"
    )


def _similar_modules(missing: str) -> str:
    """``"; did you mean 'examples.trip_planner'?"`` for a mistyped module, else ``""``."""
    parent, _, leaf = missing.rpartition(".")
    if parent:
        found = sys.modules.get(parent)
        paths = list(getattr(found, "__path__", []))
    else:
        paths = [os.getcwd()]
    close = close_names(leaf, [n for path in paths for n in _module_names(Path(path))])
    if not close:
        return ""
    prefix = f"{parent}." if parent else ""
    return "; did you mean " + " or ".join(repr(prefix + n) for n in close) + "?"


def _module_names(folder: Path) -> list[str]:
    """Modules and packages (namespace packages too) directly inside ``folder``."""
    try:
        entries = list(folder.iterdir())
    except OSError:  # a path entry that is not a readable folder
        return []
    names = [e.stem for e in entries if e.suffix == ".py" and e.is_file()]
    names += [e.name for e in entries if e.is_dir() and e.name.isidentifier()]
    return names


def _no_attribute(target: str, where: str, obj: Any, part: str) -> str:
    public = [n for n in dir(obj) if not n.startswith("_")]
    hint = did_you_mean(part, public)
    if not hint and isinstance(obj, ModuleType):
        defined = _functions_of(obj)
        if defined:
            more = ", …" if len(defined) > _LISTED else ""
            hint = f"; it defines {', '.join(defined[:_LISTED])}{more}"
    kind = "module" if isinstance(obj, ModuleType) else type(obj).__name__
    return f"{target}: {kind} {where!r} has no attribute {part!r}{hint}"


def _functions_of(module: ModuleType) -> list[str]:
    """Public callables defined in ``module`` itself (functions, agentic functions, tools)."""
    names = []
    for name, value in vars(module).items():
        if name.startswith("_") or inspect.isclass(value) or inspect.ismodule(value):
            continue
        origin = getattr(getattr(value, "fn", value), "__module__", None)
        if callable(value) and origin == module.__name__:
            names.append(name)
    return sorted(names)
