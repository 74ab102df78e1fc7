"""A process that chats on one conversation of a shared store (started by the store tests).

    python _chat_process.py PLACE CONVERSATION MODE [ARGS...]

``PLACE`` names the store as ``_places.open_store`` reads it (``sqlite:PATH``,
``dbos:URL``).

Modes:
- ``send TEXT...``: send each text; print each request the model got, one JSON
  line (``dump_messages`` of its messages).
- ``hold MARKER RELEASE LEASE_S``: send once with a model that creates MARKER,
  then waits until RELEASE exists; exit 0 if the reply was saved, 3 if the
  store refused it because the conversation changed meanwhile.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

from _places import open_store  # beside this script

from openprogram import OpenProgramError, Runtime
from openprogram.messages import UserMessage, dump_messages
from openprogram.providers.base import ProviderRequest
from openprogram.testing import FunctionProvider


def echo(request: ProviderRequest) -> str:
    print(dump_messages(request.messages), flush=True)
    last = request.messages[-1]
    assert isinstance(last, UserMessage)
    return f"re: {last.text}"


def send(place: str, conversation: str, texts: list[str]) -> int:
    store = open_store(place)
    try:
        chat = Runtime(FunctionProvider(echo), store=store).conversation(conversation)
        for text in texts:
            chat.send(text)
    finally:
        store.close()
    return 0


def hold(place: str, conversation: str, marker: str, release: str, lease_s: str) -> int:
    def waiting(request: ProviderRequest) -> str:
        Path(marker).touch()
        while not Path(release).exists():
            time.sleep(0.02)
        return "held reply"

    store = open_store(place, lease_s=float(lease_s))
    try:
        chat = Runtime(FunctionProvider(waiting), store=store).conversation(conversation)
        chat.send("holding")
    except OpenProgramError as exc:
        print(exc, flush=True)
        return 3
    finally:
        store.close()
    return 0


if __name__ == "__main__":
    place, conversation, mode, *rest = sys.argv[1:]
    if mode == "send":
        sys.exit(send(place, conversation, rest))
    sys.exit(hold(place, conversation, *rest))
