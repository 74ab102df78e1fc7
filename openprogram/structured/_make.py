"""``decision.make`` and ``async_make``: a decision right away, with no tools and no work phase.

Each is one ``exec(prompt, tools=[], choices=options)`` on the given, current
or default runtime, typed by the options' form like ``exec(choices=...)``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, overload

from openprogram.context import resolve_runtime
from openprogram.exceptions import ConfigurationError
from openprogram.structured._decision import DecisionMenu

if TYPE_CHECKING:
    from openprogram.structured._pick_types import (
        AsyncFunctionOptions,
        AsyncFunctionOrValueOptions,
        ClassOptions,
        Cls,
        DescribedValueOptions,
        FunctionOptions,
        FunctionOrValueOptions,
        MixedOptions,
        Returned,
        SchemaOptions,
        Unjoined,
        Value,
        ValueOptions,
    )

__all__ = ["async_make", "make"]


# The same overloads as Runtime.exec's for choices= (structured/_pick_types.py). The first
# three overlap the later ones only on an empty list (refused at run time) and on Unjoined
# (no value has it), so mypy's overlap warning is silenced there.
@overload
def make(prompt: str, options: ClassOptions[Cls] | Unjoined, runtime: Any = None) -> type[Cls]: ...  # type: ignore[overload-overlap]
@overload
def make(  # type: ignore[overload-overlap]
    prompt: str, options: AsyncFunctionOptions[Returned] | Unjoined, runtime: Any = None
) -> Returned: ...
@overload
def make(  # type: ignore[overload-overlap]
    prompt: str, options: FunctionOptions[Returned] | Unjoined, runtime: Any = None
) -> Returned: ...
@overload
def make(prompt: str, options: SchemaOptions | Unjoined, runtime: Any = None) -> dict[str, Any]: ...
@overload
def make(
    prompt: str, options: DescribedValueOptions[Value] | Unjoined, runtime: Any = None
) -> Value: ...
@overload
def make(prompt: str, options: ValueOptions[Value] | Unjoined, runtime: Any = None) -> Value: ...
@overload
def make(
    prompt: str,
    options: AsyncFunctionOrValueOptions[Returned, Value] | Unjoined,
    runtime: Any = None,
) -> Returned | Value: ...
@overload
def make(
    prompt: str, options: FunctionOrValueOptions[Returned, Value] | Unjoined, runtime: Any = None
) -> Returned | Value: ...
@overload
def make(prompt: str, options: MixedOptions, runtime: Any = None) -> object: ...
@overload
def make(prompt: str, options: DecisionMenu, runtime: Any = None) -> Any: ...
def make(prompt: str, options: Any, runtime: Any = None) -> Any:
    """Ask the model to pick one option right away (no tools, no work phase).

    Args:
        prompt: What to decide.
        options: The options, in any form ``exec(choices=...)`` accepts.
        runtime: The runtime to ask; defaults to the current, then the default runtime.

    Returns:
        The picked function's return value, the picked value, or the schema
        option's ``{"decision": name, **fields}``; typed as ``exec(choices=...)``'s.

    Raises:
        DecisionError: No valid pick even after one re-ask, or the call was aborted.
        ConfigurationError: No runtime was given, current or set as default.
    """
    return _runtime(runtime).exec(prompt, tools=[], choices=options)


@overload
async def async_make(  # type: ignore[overload-overlap]
    prompt: str, options: ClassOptions[Cls] | Unjoined, runtime: Any = None
) -> type[Cls]: ...
@overload
async def async_make(  # type: ignore[overload-overlap]
    prompt: str, options: AsyncFunctionOptions[Returned] | Unjoined, runtime: Any = None
) -> Returned: ...
@overload
async def async_make(  # type: ignore[overload-overlap]
    prompt: str, options: FunctionOptions[Returned] | Unjoined, runtime: Any = None
) -> Returned: ...
@overload
async def async_make(
    prompt: str, options: SchemaOptions | Unjoined, runtime: Any = None
) -> dict[str, Any]: ...
@overload
async def async_make(
    prompt: str, options: DescribedValueOptions[Value] | Unjoined, runtime: Any = None
) -> Value: ...
@overload
async def async_make(
    prompt: str, options: ValueOptions[Value] | Unjoined, runtime: Any = None
) -> Value: ...
@overload
async def async_make(
    prompt: str,
    options: AsyncFunctionOrValueOptions[Returned, Value] | Unjoined,
    runtime: Any = None,
) -> Returned | Value: ...
@overload
async def async_make(
    prompt: str, options: FunctionOrValueOptions[Returned, Value] | Unjoined, runtime: Any = None
) -> Returned | Value: ...
@overload
async def async_make(prompt: str, options: MixedOptions, runtime: Any = None) -> object: ...
@overload
async def async_make(prompt: str, options: DecisionMenu, runtime: Any = None) -> Any: ...
async def async_make(prompt: str, options: Any, runtime: Any = None) -> Any:
    """``make`` for async code."""
    return await _runtime(runtime).async_exec(prompt, tools=[], choices=options)


def _runtime(runtime: Any) -> Any:
    found = resolve_runtime(runtime)
    if found is None:
        raise ConfigurationError(
            "no runtime to decide with: pass runtime=Runtime(...), use `with runtime:`, "
            "or call openprogram.set_default_runtime(...)"
        )
    return found
