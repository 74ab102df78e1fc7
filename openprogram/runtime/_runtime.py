"""``Runtime``: the provider, defaults and hooks every ``exec`` runs with (ARCHITECTURE §8)."""

from __future__ import annotations

import asyncio
import contextlib
import os
import threading
import time
from collections import deque
from collections.abc import AsyncGenerator, Callable, Mapping, Sequence
from contextlib import AbstractContextManager
from types import TracebackType
from typing import TYPE_CHECKING, Any, TypeAlias, TypeVar, Unpack, overload

from openprogram.budget import Budget
from openprogram.context import get_current_frame, use_current_runtime
from openprogram.events import AgentEnd, AgentInvoked, Observer, digest, size_bytes
from openprogram.exceptions import BudgetExceeded, ConfigurationError, UserError
from openprogram.messages import UserMessage, user_content
from openprogram.providers import default_model_string, resolve_provider
from openprogram.providers.base import Provider
from openprogram.registry import Registry, default_registry
from openprogram.runtime._approval import Approval
from openprogram.runtime._bound import BoundCall, exec_parent, following_call
from openprogram.runtime._finale import Finale, with_instructions
from openprogram.runtime._loop import run_loop
from openprogram.runtime._options import (
    CommonExecKwargs,
    ExecKwargs,
    ExecOptions,
    FormatKwargs,
    PickKwargs,
    check_sampling,
)
from openprogram.runtime._result import RunResult
from openprogram.runtime._run import RunState, Sink
from openprogram.runtime._scope import ToolScope, build_scope, check_forced_choice
from openprogram.runtime._spend import budget_timeout, close_budget, open_budget
from openprogram.runtime._stream import QueueSink, StreamEvent, StreamFinal
from openprogram.runtime._sync import run_sync

if TYPE_CHECKING:
    from pydantic import BaseModel

    from openprogram.structured import OutputSchema
    from openprogram.structured._decision import DecisionMenu
    from openprogram.structured._pick_types import (
        AsyncFunctionOptions,
        ClassOptions,
        Cls,
        DescribedValueOptions,
        FunctionOptions,
        MixedOptions,
        Returned,
        SchemaOptions,
        Unjoined,
        Value,
        ValueOptions,
    )

__all__ = ["MODEL_ENV_VAR", "Runtime"]

MODEL_ENV_VAR = "OPENPROGRAM_MODEL"
"""Read for a provider string when ``Runtime(provider=None)``."""

_NO_PROVIDER = (
    "no model provider is configured: pass Runtime(provider=...) with a Provider object or a "
    "string such as 'openai:gpt-4o-mini' (also 'anthropic:...', 'gemini:...', 'bedrock:...', "
    f"'ollama:...'), or set the environment variable {MODEL_ENV_VAR}=openai:gpt-4o-mini "
    "(plus that vendor's API key, e.g. OPENAI_API_KEY), or install the embedded local model "
    "with pip install 'openprogram-ai[local]'; for tests use openprogram.testing.ScriptedProvider"
)
_DONE = object()
_M = TypeVar("_M", bound="BaseModel")
_Schema: TypeAlias = "Mapping[str, Any] | OutputSchema"
"""A ``response_format`` that is a JSON Schema: the answer is whatever JSON value it allows."""


class Runtime:
    """Runs ``exec`` loops against one provider, with shared defaults and hooks.

    Args:
        provider: A ``Provider``, a string ``"vendor:model"``, or ``None`` to read
            ``OPENPROGRAM_MODEL`` at the first exec.
        model: Overrides the provider's default model (``exec(model=...)`` overrides this).
        system: Default system prompt; an ``@agentic_function(system=...)`` whose
            body runs the exec takes precedence over it.
        registry: Where execs without ``tools=`` find tools (default: ``default_registry``).
        deps: A user bundle handed to tools as ``ToolContext.deps`` and to ``can_use`` gates.
        observers: Callables receiving every trace event (``openprogram.events``).
        max_retries: Overrides the provider's retry count for every model call.
        approval: ``approval(call) -> None | str`` consulted before every tool call.
        on_stream: Receives every stream event of every exec (may run on worker threads).
        trace_payloads: Put argument/result values into events (off: hashes and sizes only).
        max_depth: How deep execs may nest inside tool bodies.
        budget: Limits for each top-level exec's whole run tree (``openprogram.Budget``);
            ``None`` uses the defaults (finite agentic calls and threads).
        temperature: Sampling temperature of every model call (``exec(temperature=)`` wins).
        max_tokens: Cap on tokens generated per model call (``exec(max_tokens=)`` wins).
        seed: Sampling seed of every model call, where the wire has one (``exec(seed=)`` wins).

    Example:
        >>> from openprogram.testing import ScriptedProvider
        >>> Runtime(ScriptedProvider(["Hello!"])).exec("Say hello", tools=[])
        'Hello!'
    """

    # The runtime injected into a tool body is a view sharing this __dict__ plus its own
    # bound scope (runtime/_bound.py), so the scope is a slot, outside the shared state.
    __slots__ = ("__dict__", "__weakref__", "_bound_call", "_bound_scope")

    def __init__(
        self,
        provider: Provider | str | None = None,
        *,
        model: str | None = None,
        system: str | None = None,
        registry: Registry | None = None,
        deps: Any = None,
        observers: Sequence[Observer] = (),
        max_retries: int | None = None,
        approval: Approval | None = None,
        on_stream: Callable[[StreamEvent], object] | None = None,
        trace_payloads: bool = False,
        max_depth: int = 8,
        budget: Budget | None = None,
        temperature: float | None = None,
        max_tokens: int | None = None,
        seed: int | None = None,
    ) -> None:
        _check_arguments(provider, observers, max_retries, approval, on_stream, max_depth)
        if budget is not None and not isinstance(budget, Budget):
            raise UserError(f"Runtime(budget={budget!r:.80}) must be an openprogram.Budget or None")
        check_sampling("Runtime", temperature, max_tokens, seed)
        self.temperature, self.max_tokens, self.seed = temperature, max_tokens, seed
        self._provider = provider if not isinstance(provider, str) else None
        self._provider_spec = provider if isinstance(provider, str) else None
        self.model = model
        self.system = system
        self.registry = registry if registry is not None else default_registry
        self.deps = deps
        self.observers: tuple[Observer, ...] = tuple(observers)
        self.max_retries = max_retries
        self.approval = approval
        self.on_stream = on_stream
        self.trace_payloads = trace_payloads
        self.max_depth = max_depth
        self.budget = budget
        self.last_run: RunResult | None = None
        """The record of the most recently finished exec of this runtime (nested ones included)."""
        self._steering: deque[UserMessage] = deque()
        self._follow_ups: deque[UserMessage] = deque()
        self._entered: dict[tuple[int, int], list[AbstractContextManager[Any]]] = {}
        self._bound_scope: ToolScope | None = None
        self._bound_call: BoundCall | None = None

    def __eq__(self, other: object) -> bool:
        # A view bound to a tool call's scope is the same runtime (it shares this one's state).
        if isinstance(other, Runtime):
            return self.__dict__ is other.__dict__
        return NotImplemented

    def __hash__(self) -> int:
        return id(self.__dict__)

    def __repr__(self) -> str:
        provider = self._provider_spec or (self._provider.name if self._provider else None)
        return f"Runtime(provider={provider!r}, model={self.model!r})"

    @property
    def provider(self) -> Provider:
        """The provider, resolved from the string or ``OPENPROGRAM_MODEL`` on first use.

        Raises:
            ConfigurationError: No provider is configured, or its string cannot be resolved.
        """
        if self._provider is None:
            spec = self._provider_spec or os.environ.get(MODEL_ENV_VAR) or default_model_string()
            if spec is None:
                raise ConfigurationError(_NO_PROVIDER)
            self._provider = resolve_provider(spec)
        return self._provider

    # -- running ----------------------------------------------------------------------------

    # The overloads type the answer by what decides it: nothing (text), a model class (an
    # instance of it), a JSON Schema (its JSON value), ``choices`` by the form of its options,
    # tried in the order structured/_pick_types.py explains (first fit wins, so keep it).
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
        self, content: Any, *, response_format: type[_M], **options: Unpack[FormatKwargs]
    ) -> _M: ...
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
        self, content: Any, *, choices: MixedOptions, **options: Unpack[PickKwargs]
    ) -> object: ...
    @overload
    def exec(
        self, content: Any, *, choices: DecisionMenu, **options: Unpack[PickKwargs]
    ) -> Any: ...
    def exec(self, content: Any, **options: Unpack[ExecKwargs]) -> Any:
        """Run the tool loop on ``content`` and return the final answer.

        The model picks tools or answers in text; picked tools run and their
        results go back, until a text answer (ARCHITECTURE §8). Works from plain
        code, from inside a running event loop (it then runs on a worker thread
        and blocks) and from tool bodies on worker threads. ``last_run`` keeps
        the record of the run.

        Args:
            content: A string, or a list of blocks (text, ``{"type": "image", ...}``).
            **options: ``tools``, ``toolset``, ``tools_source``, ``tools_allow``,
                ``tools_deny``, ``tool_choice``, ``parallel_tool_calls``,
                ``max_iterations``, ``timeout_s``, ``model``, ``on_max_iterations``,
                ``budget``, ``temperature``, ``max_tokens``, ``seed`` (see ``ExecOptions``
                for each).

        Returns:
            The text of the final answer; with ``response_format=`` the validated
            answer (an instance of the model class), with ``choices=`` the pick's result.
            For type checkers, ``choices=`` of functions gives what they return (their
            join, e.g. ``object``, when they differ), of values their type, of schema
            options ``dict[str, Any]``, of a mix of forms ``object``; a JSON Schema
            ``response_format`` and a prebuilt ``DecisionMenu`` give ``Any``, as the
            type is only known at run time.

        Raises:
            UserError: Contradictory or invalid options, a forced tool not in the menu.
            ConfigurationError: No provider is configured.
            LLMError: The provider failed (after its retries).
            MaxIterationsExceeded: The cap was hit with ``on_max_iterations="raise"``.
            BudgetExceeded: The run tree spent a limit of its budget (``budget=``).
            TimeoutError: ``timeout_s`` (or an enclosing exec's deadline) expired.
        """
        parsed = ExecOptions.from_kwargs(options)
        return run_sync(lambda: self._run(content, parsed, ()))

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
        self, content: Any, *, response_format: type[_M], **options: Unpack[FormatKwargs]
    ) -> _M: ...
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
        self, content: Any, *, choices: MixedOptions, **options: Unpack[PickKwargs]
    ) -> object: ...
    @overload
    async def async_exec(
        self, content: Any, *, choices: DecisionMenu, **options: Unpack[PickKwargs]
    ) -> Any: ...
    async def async_exec(self, content: Any, **options: Unpack[ExecKwargs]) -> Any:
        """``exec`` for async code: same options, same result, same errors."""
        return await self._run(content, ExecOptions.from_kwargs(options), ())

    def stream(
        self, content: Any, **options: Unpack[ExecKwargs]
    ) -> AsyncGenerator[StreamEvent, None]:
        """Run ``exec`` and yield its stream events, ending with ``StreamFinal``.

        Events of runs nested in its tools are included (tell them apart by
        ``run_id``). Closing the iterator early cancels the exec.
        """
        return self._stream(content, ExecOptions.from_kwargs(options))

    async def _stream(
        self, content: Any, options: ExecOptions
    ) -> AsyncGenerator[StreamEvent, None]:
        queue: asyncio.Queue[Any] = asyncio.Queue()
        task = asyncio.ensure_future(self._run(content, options, (QueueSink(queue),)))
        task.add_done_callback(lambda _: queue.put_nowait(_DONE))
        try:
            while (item := await queue.get()) is not _DONE:
                yield item
            task.result()  # re-raise what ended the exec, if it failed
        finally:
            if not task.done():
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task

    async def _run(self, content: Any, options: ExecOptions, sinks: Sequence[Sink]) -> Any:
        message = user_content(content)
        parent = exec_parent(self)
        if parent is not None and parent.depth >= self.max_depth:
            raise UserError(
                f"exec refused: the nesting depth limit (max_depth={self.max_depth}) is reached; "
                "an exec inside a tool body nests one level deeper — raise Runtime(max_depth=...)"
            )
        run = RunState(
            runtime=self,
            provider=self.provider,
            options=options,
            parent=parent.run if parent is not None else None,
            sinks=(*sinks, self.on_stream) if self.on_stream is not None else sinks,
            system=self._system_prompt(),
            deadline=_deadline(options.timeout_s, parent.run.deadline if parent else None),
        )
        run.scope = build_scope(runtime=self, options=options, parent=parent, run=run)
        run.deadline = _earliest(run.deadline, run.scope.ledger.deadline_of_tree)
        check_forced_choice(options.forced_name, run.scope.menu, options.tool_choice)
        core = run.scope.menu.core
        run.finale = Finale.of(options, run.provider, (*core.names, *core.deferred_names))
        message = with_instructions(message, run.finale)
        run.messages.append(message)
        self._invoked(run, message)
        finished = cancelled = False
        try:
            open_budget(run)
            output = await self._drive(run)
            finished = True
            return output
        except BudgetExceeded:
            run.stop_reason = "budget"
            raise
        except asyncio.CancelledError:
            cancelled = True
            raise
        finally:
            close_budget(run)
            self._ended(run, finished)
            # Observers have seen every event when exec returns, unless that would overrun
            # the deadline or delay a cancellation (then the delivery thread finishes alone).
            await run.delivered(time.monotonic() if cancelled else run.deadline)

    async def _drive(self, run: RunState) -> Any:
        if run.deadline is None:
            async with following_call(self):
                return await _loop_with_status(run)
        timeout = asyncio.timeout_at(_loop_time(run.deadline))
        try:
            async with timeout, following_call(self):
                return await _loop_with_status(run)
        except TimeoutError:
            if not timeout.expired():
                raise
            run.stop_reason = "timeout"
            if (spent := budget_timeout(run)) is not None:
                raise spent from None
            raise TimeoutError(
                f"exec timed out: it did not finish within its deadline (timeout_s="
                f"{run.options.timeout_s}, or an enclosing exec's) after {run.iterations} model "
                "call(s); raise timeout_s, or make the tools or the task smaller"
            ) from None

    def _invoked(self, run: RunState, message: UserMessage) -> None:
        text = message.text
        run.emit(
            AgentInvoked,
            provider_id=run.provider.name,
            model_id=run.model,
            depth=run.scope.depth,
            content_hash=digest(text),
            content_size_bytes=size_bytes(text),
            content=text if self.trace_payloads else None,
        )
        run.tools_resolved(run.scope.menu)

    def _ended(self, run: RunState, finished: bool) -> None:
        run.emit(
            AgentEnd,
            stop_reason=run.stop_reason,
            iterations=run.iterations,
            duration_ms=(time.monotonic() - run.started) * 1000,
            input_tokens=run.usage.input_tokens,
            output_tokens=run.usage.output_tokens,
        )
        result = run.result()
        self.last_run = result
        if finished:
            run.stream(StreamFinal, output=run.output, result=result)

    def _system_prompt(self) -> str | None:
        frame = get_current_frame()
        if frame is not None and frame.system is not None:
            return frame.system  # the agentic function's own prompt beats the runtime default
        return self.system

    # -- steering and follow-ups ------------------------------------------------------------

    def steer(self, content: Any) -> None:
        """Queue a user message for the next model call of this runtime's top-level exec.

        Calls of the current batch that have not started yet are answered
        ``"Skipped due to queued user message"``; a text answer does not end the
        exec while a steering message waits. Queued with no exec running, it joins
        the first model call of the next one. Execs nested in tool bodies leave it
        to the top-level exec. Safe to call from any thread.
        """
        self._steering.append(user_content(content))

    def follow_up(self, content: Any) -> None:
        """Queue a user message that starts another round after the top-level exec's text answer.

        The exec then returns the answer of the last round. Safe to call from any thread.
        """
        self._follow_ups.append(user_content(content))

    def steering_pending(self) -> bool:
        """Whether a steering message is waiting to be delivered."""
        return bool(self._steering)

    def take_steering(self) -> list[UserMessage]:
        """Remove and return the queued steering messages (the loop delivers them)."""
        return _drain(self._steering)

    def take_follow_ups(self) -> list[UserMessage]:
        """Remove and return the queued follow-up messages."""
        return _drain(self._follow_ups)

    # -- with runtime: ----------------------------------------------------------------------

    def __enter__(self) -> Runtime:
        """Make this the current runtime for the block (agentic functions called in it use it)."""
        manager = use_current_runtime(self)
        manager.__enter__()
        self._entered.setdefault(_block_key(), []).append(manager)
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        key = _block_key()
        managers = self._entered[key]
        manager = managers.pop()
        if not managers:
            del self._entered[key]
        manager.__exit__(exc_type, exc, tb)


async def _loop_with_status(run: RunState) -> Any:
    try:
        return await run_loop(run)
    except asyncio.CancelledError:
        run.stop_reason = "aborted"
        raise
    except BaseException:
        if run.stop_reason == "stop":  # keep "max_iterations" of on_max_iterations="raise"
            run.stop_reason = "error"
        raise


def _drain(queue: deque[UserMessage]) -> list[UserMessage]:
    taken: list[UserMessage] = []
    while queue:  # popleft is atomic, so steer() from another thread is never lost
        try:
            taken.append(queue.popleft())
        except IndexError:
            break
    return taken


def _block_key() -> tuple[int, int]:
    """Identify the thread and task a ``with runtime:`` block runs in (blocks nest per task)."""
    try:
        task = asyncio.current_task()
    except RuntimeError:  # no running loop in this thread
        task = None
    return threading.get_ident(), id(task) if task is not None else 0


def _deadline(timeout_s: float | None, inherited: float | None) -> float | None:
    own = time.monotonic() + timeout_s if timeout_s is not None else None
    if own is None or inherited is None:
        return own if own is not None else inherited
    return min(own, inherited)


def _earliest(a: float | None, b: float | None) -> float | None:
    return b if a is None else a if b is None else min(a, b)


def _loop_time(deadline: float) -> float:
    """Convert a ``time.monotonic()`` deadline to the running loop's clock."""
    loop = asyncio.get_running_loop()
    return loop.time() + (deadline - time.monotonic())


def _check_arguments(  # noqa: PLR0917 - one check per constructor argument, in its order
    provider: Any,
    observers: Any,
    max_retries: Any,
    approval: Any,
    on_stream: Any,
    max_depth: Any,
) -> None:
    if (
        provider is not None
        and not isinstance(provider, str)
        and not callable(getattr(provider, "stream", None))
    ):
        raise TypeError(
            f"Runtime(provider={provider!r:.80}) is not a provider: pass an object with "
            ".stream(request) (openprogram.providers.base.Provider), a string like "
            "'openai:gpt-4o-mini', or None"
        )
    if isinstance(observers, str) or not all(callable(o) for o in observers):
        raise TypeError("Runtime(observers=...) must be a sequence of callables taking an event")
    if max_retries is not None and (not isinstance(max_retries, int) or max_retries < 0):
        raise UserError(f"Runtime(max_retries={max_retries!r}) must be None or an int >= 0")
    for name, value in (("approval", approval), ("on_stream", on_stream)):
        if value is not None and not callable(value):
            raise TypeError(f"Runtime({name}={value!r:.60}) must be a callable or None")
    if isinstance(max_depth, bool) or not isinstance(max_depth, int) or max_depth < 1:
        raise UserError(f"Runtime(max_depth={max_depth!r}) must be an int >= 1")
