"""Hypothesis strategies for messages of every kind, small and fast to draw."""

from __future__ import annotations

import base64
import dataclasses
import random
from typing import Any

from hypothesis import strategies as st

from openprogram.messages import (
    AssistantMessage,
    ImageContent,
    Message,
    TextContent,
    ThinkingContent,
    ToolCall,
    ToolResultMessage,
    Usage,
    UserMessage,
)

texts = st.text(max_size=12)
json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**40), 2**40)
    | st.floats(allow_nan=False, allow_infinity=False)
    | texts,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(texts, inner, max_size=3),
    max_leaves=6,
)
metas = st.none() | st.dictionaries(texts, json_values, min_size=1, max_size=2)
images = st.builds(
    ImageContent,
    data=st.binary(max_size=12).map(lambda b: base64.b64encode(b).decode("ascii")),
    mime_type=st.sampled_from(["image/png", "image/jpeg", "image/webp"]),
)
user_blocks = st.one_of(st.builds(TextContent, texts, provider_meta=metas), images)
users = st.builds(UserMessage, texts | st.lists(user_blocks, max_size=3).map(tuple))
calls = st.builds(
    ToolCall,
    id=texts,
    name=texts,
    arguments=st.dictionaries(texts, json_values, max_size=3),
    arguments_error=st.none() | texts,
    provider_meta=metas,
)
reply_blocks = st.one_of(
    st.builds(TextContent, texts, provider_meta=metas),
    st.builds(ThinkingContent, texts, provider_meta=metas),
    calls,
)
counts = st.integers(0, 10**6)
replies = st.builds(
    AssistantMessage,
    st.lists(reply_blocks, max_size=4).map(tuple),
    stop_reason=st.sampled_from(
        ["stop", "tool_calls", "length", "content_filter", "refusal", "error", "aborted"]
    ),
    usage=st.builds(Usage, counts, counts, counts),
    error=st.none() | texts,
    model=st.none() | texts,
    wire=st.none() | st.sampled_from(["openai", "anthropic", "gemini", "bedrock"]),
)
results = st.builds(
    ToolResultMessage, call_id=texts, tool_name=texts, content=texts, is_error=st.booleans()
)
messages: st.SearchStrategy[Message] = st.one_of(users, replies, results)
message_lists = st.lists(messages, max_size=6)


def everything(value: Any) -> Any:
    """``value`` as nested tuples of every field, ``compare=False`` ones included, with types.

    Message equality leaves out ``provider_meta`` and ``wire`` (they are opaque); a
    lossless round trip must keep them too, and keep ``1``, ``1.0`` and ``True`` apart.
    """
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        fields = dataclasses.fields(value)
        return (type(value).__name__, *(everything(getattr(value, f.name)) for f in fields))
    if isinstance(value, dict):
        return ("dict", *sorted((k, everything(v)) for k, v in value.items()))
    if isinstance(value, list | tuple):
        return (type(value).__name__, *(everything(v) for v in value))
    return (type(value).__name__, value)


# -- a fast generator: the same kinds, drawn with random.Random from one seed ---------------

_CHARS = 'ab é✓\n"\\{}'


def _text(rng: random.Random) -> str:
    return "".join(rng.choice(_CHARS) for _ in range(rng.randrange(8)))


def _json(rng: random.Random, depth: int = 0) -> Any:
    kind = rng.randrange(8 if depth < 2 else 6)
    if kind == 0:
        return None
    if kind == 1:
        return rng.random() < 0.5
    if kind == 2:
        return rng.randrange(-(2**40), 2**40)
    if kind == 3:
        return rng.uniform(-1e9, 1e9)
    if kind in (4, 5):
        return _text(rng)
    if kind == 6:
        return [_json(rng, depth + 1) for _ in range(rng.randrange(3))]
    return {_text(rng): _json(rng, depth + 1) for _ in range(rng.randrange(3))}


def _meta(rng: random.Random) -> dict[str, Any] | None:
    return None if rng.random() < 0.6 else {_text(rng): _json(rng) for _ in range(2)}


def _user(rng: random.Random) -> UserMessage:
    if rng.random() < 0.5:
        return UserMessage(_text(rng))
    blocks: list[Any] = []
    for _ in range(rng.randrange(3)):
        if rng.random() < 0.5:
            blocks.append(TextContent(_text(rng), provider_meta=_meta(rng)))
        else:
            data = base64.b64encode(rng.randbytes(rng.randrange(12))).decode("ascii")
            blocks.append(ImageContent(data=data, mime_type="image/png"))
    return UserMessage(tuple(blocks))


def _block(rng: random.Random) -> Any:
    kind = rng.randrange(3)
    if kind == 2:
        arguments = {_text(rng): _json(rng) for _ in range(rng.randrange(3))}
        error = None if rng.random() < 0.8 else _text(rng)
        return ToolCall(_text(rng), _text(rng), arguments, error, provider_meta=_meta(rng))
    cls = TextContent if kind == 0 else ThinkingContent
    return cls(_text(rng), provider_meta=_meta(rng))


def _reply(rng: random.Random) -> AssistantMessage:
    return AssistantMessage(
        tuple(_block(rng) for _ in range(rng.randrange(4))),
        stop_reason=rng.choice(["stop", "tool_calls", "length", "refusal", "error", "aborted"]),
        usage=Usage(rng.randrange(10**6), rng.randrange(10**6), rng.randrange(10**6)),
        error=rng.choice([None, _text(rng)]),
        model=rng.choice([None, "gpt-x"]),
        wire=rng.choice([None, "openai", "anthropic", "gemini"]),
    )


def random_messages(seed: int) -> list[Message]:
    """Up to 6 messages of every kind, drawn from ``seed`` (fast: no strategy machinery)."""
    rng = random.Random(seed)
    makers = (
        _user,
        _reply,
        lambda r: ToolResultMessage(_text(r), _text(r), _text(r), r.random() < 0.5),
    )
    return [rng.choice(makers)(rng) for _ in range(rng.randrange(7))]
