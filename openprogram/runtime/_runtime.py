"""``Runtime``: the provider, defaults and hooks every ``exec`` runs with (docs/concepts.md)."""

from __future__ import annotations

import os
from collections import deque
from collections.abc import AsyncGenerator, Callable, Iterable, Mapping, Sequence
from types import TracebackType
from typing import TYPE_CHECKING, Any, TypeAlias, TypeVar, Unpack, overload

from openprogram.budget import Budget
from openprogram.events import Observer
from openprogram.exceptions import ConfigurationError
from openprogram.messages import UserMessage, user_content
from openprogram.providers import default_model_string, resolve_provider
from openprogram.providers.base import Provider
from openprogram.registry import Registry, default_registry
from openprogram.runtime._approval import Approval
from openprogram.runtime._blocks import RuntimeBlocks
from openprogram.runtime._conversation import (
    DEFAULT_TRIM,
    Conversation,
    Trim,
    check_conversation_arguments,
)
from openprogram.runtime._options import (
    CommonExecKwargs,
    ExecKwargs,
    ExecOptions,
    FormatKwargs,
    PickKwargs,
    check_runtime_arguments,
    check_sampling,
)
from openprogram.runtime._result import RunResult
from openprogram.runtime._resume import resume_run
from openprogram.runtime._start import run_exec, stream_exec
from openprogram.runtime._stream import StreamEvent
from openprogram.runtime._submit import run_result, submit_resume, submit_run
from openprogram.runtime._sync import run_sync
from openprogram.runtime._tree import Tree
from openprogram.runtime._unmatched import (
    keywords_with_choices,
    keywords_without_choices,
    unmatched,
)
from openprogram.stores import MemoryStore, Store

if TYPE_CHECKING:
    from types import UnionType
    from typing import _SpecialForm

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
_T = TypeVar("_T")
_Schema: TypeAlias = "Mapping[str, Any] | OutputSchema | _SpecialForm | UnionType"
"""A ``response_format`` that types no answer: a JSON Schema, or a typing form that is no
class (``Literal[...]``, ``Annotated[...]``, ``A | B``): the answer is ``Any``."""


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
        store: Where conversations and durable runs are kept (``openprogram.stores``): a
            ``SQLiteStore`` to continue them in other processes; with a store every exec is
            a durable run (docs/durable.md); ``None`` keeps conversations in this runtime's
            memory and journals nothing.

    Example:
        >>> from openprogram.testing import ScriptedProvider
        >>> Runtime(ScriptedProvider(["Hello!"])).exec("Say hello", tools=[])
        'Hello!'
    """

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
        store: Store | None = None,
    ) -> None:
        if store is not None and not isinstance(store, Store):
            raise TypeError(
                f"Runtime(store={store!r:.60}) is not a store: pass an openprogram.stores "
                "SQLiteStore(path) or MemoryStore(), or None"
            )
        check_runtime_arguments(
            provider, observers, max_retries, approval, on_stream, max_depth, budget
        )
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
        self.store = store
        """The store given as ``store=`` (``None``: conversations stay in this runtime's memory)."""
        self._memory = MemoryStore()
        self.last_run: RunResult | None = None
        """The record of the most recently finished exec of this runtime (nested ones included)."""
        self._steering: deque[UserMessage] = deque()
        self._follow_ups: deque[UserMessage] = deque()
        self._entered = RuntimeBlocks()

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
        return run_sync(lambda: run_exec(self, content, parsed, ()))

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
        return await run_exec(self, content, ExecOptions.from_kwargs(options), ())

    def stream(
        self, content: Any, **options: Unpack[ExecKwargs]
    ) -> AsyncGenerator[StreamEvent, None]:
        """Run ``exec`` and yield its stream events, ending with ``StreamFinal``.

        Events of runs nested in its tools are included (tell them apart by
        ``run_id`` or ``depth``), but not their ``StreamFinal``: the one final
        yielded is this exec's, last, so a loop may stop at the first one
        (docs/streaming.md). Closing the iterator early cancels the exec.
        """
        return stream_exec(self, content, ExecOptions.from_kwargs(options))

    # -- trees -------------------------------------------------------------------------------

    def tree(self, *, budget: Budget | None = None) -> Tree:
        """A block whose execs form one run tree: one budget, one record (docs/trees.md).

        ``with runtime.tree(budget=...) as tree:`` (or ``async with``): execs
        started in the block, in the tasks it gathers and the threads it starts,
        share the tree's budget, and ``tree.result`` holds their records, usage
        and events. The block's runtime is the current one (as ``with runtime:``).

        Args:
            budget: Tightens the budget for the whole tree: at top level, this
                runtime's budget (defaults filled in) and then this; inside another
                tree or a tool body, that tree's budget and then this.

        Raises:
            UserError: ``budget`` is not a ``Budget``.
        """
        return Tree(self, budget)

    # -- durable runs ------------------------------------------------------------------------

    def resume(
        self,
        run_id: str,
        *,
        approve: Iterable[str] = (),
        deny: Mapping[str, str] | None = None,
        tools: Sequence[Any] | None = None,
    ) -> Any:
        """Go on with a durable run: record decisions about its paused calls, run it again.

        Its root exec runs again with the content and options its record holds, the
        journal replays what was done, approved calls run once (the approval hook is
        not asked again), denied ones become error results with the reason, undecided
        ones wait again. Works in any process sharing the store (docs/durable.md).

        Args:
            run_id: The run (``RunPaused.run_id``, ``RunResult.run_id``).
            approve: Call ids (``PendingCall.call_id``, or paths) to run.
            deny: Call id (or path) to the reason the model is told.
            tools: The tools of its exec, when they are not in the runtime's registry.

        Returns:
            What the run's exec returns (its recorded output, for a finished run).

        Raises:
            RunPaused: Calls still wait for a person.
            UserError: No such run, or a decision naming no waiting call.
            ConfigurationError: The runtime has no store that keeps runs.
            JournalDivergence: The program no longer asks what the journal recorded.
        """
        return run_sync(lambda: resume_run(self, run_id, approve=approve, deny=deny, tools=tools))

    async def async_resume(
        self,
        run_id: str,
        *,
        approve: Iterable[str] = (),
        deny: Mapping[str, str] | None = None,
        tools: Sequence[Any] | None = None,
    ) -> Any:
        """``resume`` for async code: same arguments, result and errors."""
        return await resume_run(self, run_id, approve=approve, deny=deny, tools=tools)

    # -- runs taken by workers (docs/scale-out.md) --------------------------------------------

    def submit(self, content: Any, **options: Any) -> str:
        """Queue a durable run of ``exec(content, **options)`` for worker processes; its id.

        The store must queue runs (``DBOSStore``); a worker (``openprogram worker``)
        takes it and runs it as ``resume`` would. Tools go by name: the workers (and
        the process reading the result) import the modules that register them.
        ``run_id=`` names the run (a second submit of it attaches to the first).

        Raises:
            ConfigurationError: The store has no queue.
            UserError: Invalid options, or options a worker could not run.
            JournalDivergence: ``run_id`` names a run submitted with another request.
        """
        parsed = ExecOptions.from_kwargs(options)
        return run_sync(lambda: submit_run(self, content, parsed))

    def submit_resume(
        self, run_id: str, *, approve: Iterable[str] = (), deny: Mapping[str, str] | None = None
    ) -> str:
        """Record decisions about a paused run's calls, as ``resume``, and queue the run for
        the workers to go on with (any worker, in any process); ``run_id``."""
        return run_sync(lambda: submit_resume(self, run_id, approve, deny))

    def result(self, run_id: str, *, timeout_s: float | None = None) -> Any:
        """Wait until ``run_id`` (a submitted run) is not running, and read it back by its id.

        Returns:
            A finished run's output: its journal replays here (no model call, no tool
            body runs), so the runs' tools must be registered in this process too.

        Raises:
            RunPaused: It waits for a person (go on with ``submit_resume``).
            RunFailed: It raised (``RunFailed.error`` says what).
            TimeoutError: Still running after ``timeout_s`` seconds.
            UserError: No such run.
        """
        return run_sync(lambda: run_result(self, run_id, timeout_s))

    # -- conversations -----------------------------------------------------------------------

    def conversation(
        self,
        conversation_id: str | None = None,
        *,
        trim: Trim | None = DEFAULT_TRIM,
        **exec_defaults: Unpack[ExecKwargs],
    ) -> Conversation:
        """A conversation: each ``send`` continues from the messages before it.

        Args:
            conversation_id: Continue this conversation of the store (a new one when
                it has none); ``None`` starts a new one with a generated id.
            trim: Makes the history each send continues from out of the stored
                messages (default: the newest within 100,000 characters, never a tool
                result without its call); ``None`` sends them all.
            **exec_defaults: Options of every send (``exec``'s, but ``history``).

        Raises:
            UserError: A bad id, ``trim`` or option (checked here, before any send).
        """
        check_conversation_arguments(conversation_id, trim, exec_defaults)
        store = self.store if self.store is not None else self._memory
        return Conversation(self, store, conversation_id, trim=trim, defaults=exec_defaults)

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
        self._entered.enter(self)
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._entered.exit(exc_type, exc, tb)


def _drain(queue: deque[UserMessage]) -> list[UserMessage]:
    taken: list[UserMessage] = []
    while queue:  # popleft is atomic, so steer() from another thread is never lost
        try:
            taken.append(queue.popleft())
        except IndexError:
            break
    return taken
