"""The last overloads of ``exec``, ``async_exec``, ``send`` and ``asend``: one error a keyword.

mypy finds no overload for a call with a typo'd keyword (``tool=[]``), and
lists every overload with all of its keywords (about 10,000 characters),
unless some overload's parameters fit the call with their types erased: then
it checks the call against that overload alone and reports each argument
that does not fit, on its own line. These two overloads take any keyword:
the known ones typed as in ``CommonExecKwargs``, any other ``Refused``, a
type no value has but every value fits once erased. So mypy says, for
``runtime.exec("Hi", tool=[])``::

    Argument "tool" to "exec" of "Runtime" has incompatible type "list[Never]";
    expected "NotAccepted[Never]"

No call passes them that an earlier overload does not take. One takes calls
without ``choices=``, where ``response_format=`` may be anything it may be;
the other calls with ``choices=``, where ``response_format=`` must be left
out (both together are an error). Their keywords are written in
``keywords_without_choices`` and ``keywords_with_choices`` (a test keeps them
equal to ``CommonExecKwargs``); ``unmatched(keywords_with_choices)`` types an
overload as taking ``self``, the content and those keywords.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Concatenate, ParamSpec, TypeAlias

from openprogram.budget import Budget
from openprogram.messages import Message
from openprogram.providers.base import ToolChoice
from openprogram.runtime._not_accepted import Refused
from openprogram.runtime._options import OnMaxIterations
from openprogram.structured import StructuredFallback

if TYPE_CHECKING:
    from types import UnionType
    from typing import _SpecialForm

    from openprogram.structured import OutputSchema
    from openprogram.structured._decision import DecisionMenu
    from openprogram.structured._pick_types import MixedOptions

__all__ = ["keywords_with_choices", "keywords_without_choices", "unmatched"]

_P = ParamSpec("_P")
_AnyFormat: TypeAlias = "type[Any] | Mapping[str, Any] | OutputSchema | _SpecialForm | UnionType"
"""Every ``response_format`` an earlier overload takes."""
_AnyChoices: TypeAlias = "MixedOptions | DecisionMenu"
"""Every ``choices`` an earlier overload takes."""


def unmatched(
    keywords: Callable[_P, None],
) -> Callable[[Callable[..., Any]], Callable[Concatenate[Any, Any, _P], Any]]:
    """Type the decorated overload as ``(self, content, /, <the keywords of keywords>) -> Any``.

    The decorated function is returned as it is; only its type changes.
    """

    def typed(overload: Callable[..., Any]) -> Callable[Concatenate[Any, Any, _P], Any]:
        return overload

    return typed


def keywords_without_choices(
    *,
    response_format: _AnyFormat | Refused | None = None,
    choices: None = None,
    tools: Sequence[Any] | Refused | None = None,
    toolset: str | Refused | None = None,
    tools_source: str | Refused | None = None,
    tools_allow: Iterable[str] | Refused | None = None,
    tools_deny: Iterable[str] | Refused | None = None,
    tool_choice: ToolChoice | Refused = "auto",
    parallel_tool_calls: bool | Refused = True,
    max_iterations: int | Refused = 20,
    structured_fallback: StructuredFallback | Refused = "tool",
    timeout_s: float | Refused | None = None,
    model: str | Refused | None = None,
    on_max_iterations: OnMaxIterations | Refused = "return",
    budget: Budget | Refused | None = None,
    temperature: float | Refused | None = None,
    max_tokens: int | Refused | None = None,
    seed: int | Refused | None = None,
    history: Sequence[Message] | Refused | None = None,
    run_id: str | Refused | None = None,
    **unknown: Refused,
) -> None:
    """The keywords of a call without ``choices=``, as the last overloads check them."""


def keywords_with_choices(
    *,
    choices: _AnyChoices | Refused,
    response_format: Refused | None = None,
    tools: Sequence[Any] | Refused | None = None,
    toolset: str | Refused | None = None,
    tools_source: str | Refused | None = None,
    tools_allow: Iterable[str] | Refused | None = None,
    tools_deny: Iterable[str] | Refused | None = None,
    tool_choice: ToolChoice | Refused = "auto",
    parallel_tool_calls: bool | Refused = True,
    max_iterations: int | Refused = 20,
    structured_fallback: StructuredFallback | Refused = "tool",
    timeout_s: float | Refused | None = None,
    model: str | Refused | None = None,
    on_max_iterations: OnMaxIterations | Refused = "return",
    budget: Budget | Refused | None = None,
    temperature: float | Refused | None = None,
    max_tokens: int | Refused | None = None,
    seed: int | Refused | None = None,
    history: Sequence[Message] | Refused | None = None,
    run_id: str | Refused | None = None,
    **unknown: Refused,
) -> None:
    """The keywords of a call with ``choices=``, as the last overloads check them."""
