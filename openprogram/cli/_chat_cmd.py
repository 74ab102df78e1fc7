"""``openprogram chat``: talk to a model in the terminal, one conversation, tools optional.

Examples::

    openprogram chat                                           # the embedded model, no tools
    openprogram chat --model openai:gpt-4o-mini --tools examples.trip_planner
    openprogram chat --store chats.sqlite                      # saved; its id is printed
    openprogram chat --store chats.sqlite --conversation conv_1a2b   # continue it later

Each line you type is one ``send`` of a ``Conversation``: the reply streams in
as the model writes it, and the tool calls it makes show in the live tree
(nested agentic functions indented under their call). ``/exit``, Ctrl-D, or
Ctrl-C at the prompt ends the chat; Ctrl-C while a reply comes cancels that
send (the conversation stays as it was before it). ``--tools`` takes a module
(its module-level tools are offered) or ``module:attr`` naming a list of tools
or a ``Registry``. With ``--store`` the conversation is saved in that SQLite
file after each reply; nothing is written anywhere without it.
"""

from __future__ import annotations

import argparse
import sys
import threading
from functools import partial
from typing import Any, TextIO

from openprogram.cli._command import Command
from openprogram.cli._imports import import_attribute, import_user_module
from openprogram.cli._model import choose_model, model_label
from openprogram.cli._tree import TreeView
from openprogram.decorators import AgenticFunction
from openprogram.events import AgentEnd, AgentInvoked, Event, ProviderResponseReceived
from openprogram.exceptions import ConfigurationError, OpenProgramError
from openprogram.messages import trim_history
from openprogram.registry import Registry
from openprogram.runtime import DEFAULT_TRIM, Conversation, Runtime, StreamTextDelta
from openprogram.stores import SQLiteStore
from openprogram.tools import Tool

__all__ = ["CHAT", "LOCAL_HISTORY_CHARS", "add_chat_arguments", "chat_command"]

LOCAL_HISTORY_CHARS = 12_000
"""History sent to the embedded model per reply (its context is 8,192 tokens, tools included)."""

PROMPT = "you> "
_EXIT = {"/exit", "/quit"}


def add_chat_arguments(p: argparse.ArgumentParser) -> None:
    """The options of ``openprogram chat``."""
    p.add_argument("--model", help="provider string or module:factory (default as for run)")
    p.add_argument(
        "--tools",
        help="a module whose tools are offered, or module:attr naming a list of tools or a "
        "Registry (default: no tools)",
    )
    p.add_argument("--store", help="save the conversation in this SQLite file")
    p.add_argument("--conversation", help="continue the conversation with this id (needs --store)")


def chat_command(args: argparse.Namespace) -> None:
    """Run the chat until ``/exit``, Ctrl-D or Ctrl-C at the prompt."""
    if args.conversation is not None and args.store is None:
        raise ConfigurationError(
            "chat --conversation: a conversation is continued from a store; add "
            "--store PATH (the SQLite file it was saved in)"
        )
    model = choose_model(args.model)
    tools = _tools(args.tools) if args.tools else []
    store = SQLiteStore(args.store) if args.store else None
    try:
        screen = Screen(sys.stdout)
        view = ChatView(screen)
        # The user's own terminal: the tree shows arguments and results (as run's does).
        runtime = Runtime(
            model, observers=[view], on_stream=screen.stream, store=store, trace_payloads=True
        )
        local = isinstance(model, str) and model.startswith("local:")
        trim = partial(trim_history, max_chars=LOCAL_HISTORY_CHARS) if local else DEFAULT_TRIM
        chat = runtime.conversation(args.conversation, trim=trim, tools=tools)
        _header(chat, model, args.store)
        _loop(chat, screen)
    finally:
        if store is not None:
            store.close()


def _header(chat: Conversation, model: Any, store: str | None) -> None:
    where = f", saved in {store}" if store else ""
    print(f"openprogram chat on {model_label(model)}: conversation {chat.conversation_id}{where}")
    earlier = len(chat.messages)
    if earlier:
        print(f"(continuing after {earlier} earlier message(s))")
    print("Type a message; /exit or Ctrl-D ends the chat.")


def _loop(chat: Conversation, screen: Screen) -> None:
    while True:
        try:
            line = input(PROMPT)
        except (EOFError, KeyboardInterrupt):
            print()
            return
        text = line.strip()
        if text in _EXIT:
            return
        if not text:
            continue
        try:
            chat.send(text)
        except KeyboardInterrupt:
            screen.end_line()
            print("(interrupted: the conversation is as it was before that message)")
            continue
        except ConfigurationError:
            raise  # no provider: nothing to chat with (exit 2)
        except OpenProgramError as exc:  # a provider error: the chat goes on
            screen.end_line()
            print(f"! {type(exc).__name__}: {exc}")
            continue
        screen.end_line()


def _tools(spec: str) -> list[Any]:
    """The tools ``--tools`` names (see the module docstring)."""
    if ":" in spec:
        found = import_attribute(spec)
        if isinstance(found, Registry):
            return list(found.tools())
        if isinstance(found, Tool | AgenticFunction):
            return [found]
        if isinstance(found, list | tuple):
            return list(found)
        raise ConfigurationError(
            f"--tools {spec}: that is a {type(found).__name__}; name a list of tools, a "
            "Registry or one tool"
        )
    module = import_user_module(spec)
    tools = [v for v in vars(module).values() if isinstance(v, Tool | AgenticFunction)]
    if not tools:
        raise ConfigurationError(
            f"--tools {spec}: the module defines no tools (@function or @agentic_function at "
            "module level); name a list with --tools module:attr"
        )
    return list(dict.fromkeys(tools))


class Screen:
    """The terminal, shared by the streamed reply and the tree's lines (which start on a
    line of their own)."""

    def __init__(self, out: TextIO) -> None:
        self._out = out
        self._lock = threading.Lock()
        self._mid_line = False

    def stream(self, event: Any) -> None:
        """``on_stream``: write the top-level reply's text as it comes."""
        if isinstance(event, StreamTextDelta) and event.parent_run_id is None and event.text:
            with self._lock:
                self._out.write(event.text)
                self._out.flush()
                self._mid_line = not event.text.endswith("\n")

    def write(self, text: str) -> int:
        """A tree line (``TreeView`` writes whole lines)."""
        with self._lock:
            if self._mid_line:
                self._out.write("\n")
            self._mid_line = not text.endswith("\n")
            return self._out.write(text)

    def flush(self) -> None:
        self._out.flush()

    def isatty(self) -> bool:
        return False  # no spinner: the streamed reply shows the model at work

    def end_line(self) -> None:
        """End the reply's line, if it is open."""
        with self._lock:
            if self._mid_line:
                self._out.write("\n")
                self._out.flush()
            self._mid_line = False


class ChatView:
    """The live tree of each send, without the lines about the top-level exec itself
    (its start, its model calls, its end): tool calls and nested execs only."""

    openprogram_inline = True  # called in order with the streamed text, on the loop's thread

    def __init__(self, screen: Screen) -> None:
        # The screen has the few TextIO methods the tree uses (write, flush, isatty).
        self._tree = TreeView(screen, spinner=False)  # type: ignore[arg-type]

    def __call__(self, event: Event) -> None:
        own = event.parent_run_id is None
        if own and isinstance(event, AgentInvoked | AgentEnd | ProviderResponseReceived):
            return
        self._tree(event)


CHAT = Command(
    name="chat",
    help="chat with a model in the terminal, tools optional",
    add_arguments=add_chat_arguments,
    run=chat_command,
    json_output=False,  # an interactive session: stdout is the user's terminal
)
"""``openprogram chat [--model M] [--tools M] [--store PATH --conversation ID]``."""
