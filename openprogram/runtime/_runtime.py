"""``Runtime``: the provider, defaults and hooks every ``exec`` runs with (docs/concepts.md)."""

from __future__ import annotations

import os
from collections import deque
from collections.abc import Callable, Iterable, Mapping, Sequence
from types import TracebackType
from typing import Any, Unpack

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
from openprogram.runtime._exec_api import ExecMethods
from openprogram.runtime._options import (
    ExecKwargs,
    ExecOptions,
    check_runtime_arguments,
    check_sampling,
)
from openprogram.runtime._result import RunResult
from openprogram.runtime._resume import resume_run
from openprogram.runtime._stream import StreamEvent
from openprogram.runtime._submit import run_result, submit_resume, submit_run
from openprogram.runtime._sync import run_sync
from openprogram.runtime._tree import Tree
from openprogram.stores import MemoryStore, Store
from openprogram.stores._protocol import conforms

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


class Runtime(ExecMethods):
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
        if store is not None and not conforms(store, Store):
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

    async def async_submit(self, content: Any, **options: Any) -> str:
        """``submit`` for async code: same options, same id, same errors."""
        return await submit_run(self, content, ExecOptions.from_kwargs(options))

    async def async_submit_resume(
        self, run_id: str, *, approve: Iterable[str] = (), deny: Mapping[str, str] | None = None
    ) -> str:
        """``submit_resume`` for async code: same decisions, same errors."""
        return await submit_resume(self, run_id, approve, deny)

    async def async_result(self, run_id: str, *, timeout_s: float | None = None) -> Any:
        """``result`` for async code: waits without blocking the event loop; same errors."""
        return await run_result(self, run_id, timeout_s)

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
