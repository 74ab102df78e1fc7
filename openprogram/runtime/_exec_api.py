"""``exec``, ``async_exec`` and ``stream`` of ``Runtime``: the typed table of what each returns.

Most of this module is the overload table: the answer's type follows from what
decides it (nothing: text; a class or generic alias: a value of it; a JSON
Schema or a typing form: ``Any``; ``choices=`` by the form of its options).
Each method's body is one line handing over to ``runtime/_start.py``.
``Runtime`` inherits these methods; nothing else does.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Mapping
from typing import TYPE_CHECKING, Any, TypeAlias, TypeVar, Unpack, cast, overload

from openprogram.runtime._options import (
    CommonExecKwargs,
    ExecKwargs,
    ExecOptions,
    FormatKwargs,
    PickKwargs,
)
from openprogram.runtime._start import run_exec, stream_exec
from openprogram.runtime._stream import StreamEvent
from openprogram.runtime._sync import run_sync
from openprogram.runtime._unmatched import (
    keywords_with_choices,
    keywords_without_choices,
    unmatched,
)

if TYPE_CHECKING:
    from types import UnionType
    from typing import _SpecialForm

    from openprogram.runtime._runtime import Runtime
    from openprogram.structured import OutputSchema
    from openprogram.structured._decision import DecisionMenu
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

__all__ = ["ExecMethods"]

_T = TypeVar("_T")
_Schema: TypeAlias = "Mapping[str, Any] | OutputSchema | _SpecialForm | UnionType"
"""A ``response_format`` that types no answer: a JSON Schema, or a typing form that is no
class (``Literal[...]``, ``Annotated[...]``, ``A | B``): the answer is ``Any``."""


class ExecMethods:
    """The running methods of ``Runtime`` (``Runtime`` is the only class that mixes them in)."""

    # The overloads type the answer by what decides it: nothing (text), a class or generic
    # alias (a value of it), a JSON Schema or typing form (Any), ``choices`` by the form of
    # its options, tried in the order structured/_pick_types.py explains (first fit wins).
    @overload
    def exec(
        self,
        content: Any,
        *,
        response_format: None = None,
        choices: None = None,
        **options: Unpack[CommonExecKwargs],
    ) -> str: ...
    @overload
    def exec(
        self, content: Any, *, response_format: type[_T], **options: Unpack[FormatKwargs]
    ) -> _T: ...
    @overload
    def exec(
        self, content: Any, *, response_format: _Schema, **options: Unpack[FormatKwargs]
    ) -> Any: ...
    @overload
    def exec(
        self, content: Any, *, choices: ClassOptions[Cls] | Unjoined, **options: Unpack[PickKwargs]
    ) -> type[Cls]: ...
    @overload
    def exec(
        self,
        content: Any,
        *,
        choices: AsyncFunctionOptions[Returned] | Unjoined,
        **options: Unpack[PickKwargs],
    ) -> Returned: ...
    @overload
    def exec(
        self,
        content: Any,
        *,
        choices: FunctionOptions[Returned] | Unjoined,
        **options: Unpack[PickKwargs],
    ) -> Returned: ...
    @overload
    def exec(
        self, content: Any, *, choices: SchemaOptions | Unjoined, **options: Unpack[PickKwargs]
    ) -> dict[str, Any]: ...
    @overload
    def exec(
        self,
        content: Any,
        *,
        choices: DescribedValueOptions[Value] | Unjoined,
        **options: Unpack[PickKwargs],
    ) -> Value: ...
    @overload
    def exec(
        self,
        content: Any,
        *,
        choices: ValueOptions[Value] | Unjoined,
        **options: Unpack[PickKwargs],
    ) -> Value: ...
    @overload
    def exec(
        self,
        content: Any,
        *,
        choices: AsyncFunctionOrValueOptions[Returned, Value] | Unjoined,
        **options: Unpack[PickKwargs],
    ) -> Returned | Value: ...
    @overload
    def exec(
        self,
        content: Any,
        *,
        choices: FunctionOrValueOptions[Returned, Value] | Unjoined,
        **options: Unpack[PickKwargs],
    ) -> Returned | Value: ...
    @overload
    def exec(
        self, content: Any, *, choices: MixedOptions, **options: Unpack[PickKwargs]
    ) -> object: ...
    @overload
    def exec(
        self, content: Any, *, choices: DecisionMenu, **options: Unpack[PickKwargs]
    ) -> Any: ...
    @overload
    @unmatched(keywords_without_choices)
    def exec(self, content: Any, **options: Any) -> Any: ...
    @overload
    @unmatched(keywords_with_choices)
    def exec(self, content: Any, **options: Any) -> Any: ...
    def exec(self, content: Any, **options: Any) -> Any:
        """Run the tool loop on ``content`` and return the final answer.

        The model picks tools or answers in text; picked tools run and their
        results go back, until a text answer (docs/concepts.md). Works from plain
        code, from inside a running event loop (it then runs on a worker thread
        and blocks) and from tool bodies on worker threads. ``last_run`` keeps
        the record of the run.

        Args:
            content: A string, or a list of blocks (text, ``{"type": "image", ...}``).
            **options: ``tools``, ``toolset``, ``tools_source``, ``tools_allow``,
                ``tools_deny``, ``tool_choice``, ``parallel_tool_calls``,
                ``max_iterations``, ``timeout_s``, ``model``, ``on_max_iterations``,
                ``budget``, ``temperature``, ``max_tokens``, ``seed``, ``history`` (the
                messages the run continues from), ``run_id`` (the durable run this exec
                is, with a store; see ``ExecOptions`` for each).

        Returns:
            The text of the final answer; with ``response_format=`` the validated
            answer (a value of the type: a model or dataclass instance, a ``list[int]``,
            ...), with ``choices=`` the pick's result. For type checkers, a class or
            generic alias ``response_format`` gives its type (``list[int]`` gives
            ``list[int]``), a JSON Schema or a typing form that is no class
            (``Literal[...]``, ``Annotated[...]``; ``A | B`` gives ``A | Any``) gives
            ``Any``; ``choices=`` of functions gives what they return (their join,
            e.g. ``object``, when they differ), of values their type, of both
            either, of schema options ``dict[str, Any]``, of another mix ``object``;
            a prebuilt ``DecisionMenu`` gives ``Any``, as the type is only known at
            run time. A typo'd keyword or a value of the wrong type is one error
            naming it (``runtime/_unmatched.py``).

        Raises:
            UserError: Contradictory or invalid options, a forced tool not in the menu.
            ConfigurationError: No provider is configured.
            LLMError: The provider failed (after its retries).
            StructuredOutputError: ``response_format=`` got no valid answer, or an aborted reply.
            DecisionError: ``choices=`` got no valid pick, or an aborted reply (no option runs).
            MaxIterationsExceeded: The cap was hit with ``on_max_iterations="raise"``.
            BudgetExceeded: The run tree spent a limit of its budget (``budget=``).
            TimeoutError: ``timeout_s`` (or an enclosing exec's deadline) expired.
            RunPaused: The approval hook paused calls (a durable run; resume it later).
            JournalDivergence: ``run_id`` names a run journaled for another request.
        """
        parsed = ExecOptions.from_kwargs(options)
        runtime = cast("Runtime", self)
        return run_sync(lambda: run_exec(runtime, content, parsed, ()))

    @overload
    async def async_exec(
        self,
        content: Any,
        *,
        response_format: None = None,
        choices: None = None,
        **options: Unpack[CommonExecKwargs],
    ) -> str: ...
    @overload
    async def async_exec(
        self, content: Any, *, response_format: type[_T], **options: Unpack[FormatKwargs]
    ) -> _T: ...
    @overload
    async def async_exec(
        self, content: Any, *, response_format: _Schema, **options: Unpack[FormatKwargs]
    ) -> Any: ...
    @overload
    async def async_exec(
        self, content: Any, *, choices: ClassOptions[Cls] | Unjoined, **options: Unpack[PickKwargs]
    ) -> type[Cls]: ...
    @overload
    async def async_exec(
        self,
        content: Any,
        *,
        choices: AsyncFunctionOptions[Returned] | Unjoined,
        **options: Unpack[PickKwargs],
    ) -> Returned: ...
    @overload
    async def async_exec(
        self,
        content: Any,
        *,
        choices: FunctionOptions[Returned] | Unjoined,
        **options: Unpack[PickKwargs],
    ) -> Returned: ...
    @overload
    async def async_exec(
        self, content: Any, *, choices: SchemaOptions | Unjoined, **options: Unpack[PickKwargs]
    ) -> dict[str, Any]: ...
    @overload
    async def async_exec(
        self,
        content: Any,
        *,
        choices: DescribedValueOptions[Value] | Unjoined,
        **options: Unpack[PickKwargs],
    ) -> Value: ...
    @overload
    async def async_exec(
        self,
        content: Any,
        *,
        choices: ValueOptions[Value] | Unjoined,
        **options: Unpack[PickKwargs],
    ) -> Value: ...
    @overload
    async def async_exec(
        self,
        content: Any,
        *,
        choices: AsyncFunctionOrValueOptions[Returned, Value] | Unjoined,
        **options: Unpack[PickKwargs],
    ) -> Returned | Value: ...
    @overload
    async def async_exec(
        self,
        content: Any,
        *,
        choices: FunctionOrValueOptions[Returned, Value] | Unjoined,
        **options: Unpack[PickKwargs],
    ) -> Returned | Value: ...
    @overload
    async def async_exec(
        self, content: Any, *, choices: MixedOptions, **options: Unpack[PickKwargs]
    ) -> object: ...
    @overload
    async def async_exec(
        self, content: Any, *, choices: DecisionMenu, **options: Unpack[PickKwargs]
    ) -> Any: ...
    @overload
    @unmatched(keywords_without_choices)
    async def async_exec(self, content: Any, **options: Any) -> Any: ...
    @overload
    @unmatched(keywords_with_choices)
    async def async_exec(self, content: Any, **options: Any) -> Any: ...
    async def async_exec(self, content: Any, **options: Any) -> Any:
        """``exec`` for async code: same options, same result, same errors."""
        return await run_exec(cast("Runtime", self), content, ExecOptions.from_kwargs(options), ())

    def stream(
        self, content: Any, **options: Unpack[ExecKwargs]
    ) -> AsyncGenerator[StreamEvent, None]:
        """Run ``exec`` and yield its stream events, ending with ``StreamFinal``.

        Events of runs nested in its tools are included (tell them apart by
        ``run_id`` or ``depth``), but not their ``StreamFinal``: the one final
        yielded is this exec's, last, so a loop may stop at the first one
        (docs/streaming.md). Closing the iterator early cancels the exec.
        """
        return stream_exec(cast("Runtime", self), content, ExecOptions.from_kwargs(options))
