"""Helpers to test programs built with openprogram, without a model or network.

``ScriptedProvider`` replays a script of replies; ``FunctionProvider`` lets a
function answer each request; ``call`` and ``text`` build scripted replies;
``SchemaProvider`` calls every offered tool once with valid generated
arguments, then answers (smoke tests); ``example_value`` builds a valid value
for a JSON Schema. ``block_model_requests()`` (or
``OPENPROGRAM_ALLOW_MODEL_REQUESTS=0``) makes every real provider request raise.
Hypothesis strategies for gating live in ``openprogram.testing.strategies``
(import it explicitly: it needs ``hypothesis``).

Example:
    >>> from openprogram.runtime import Runtime
    >>> from openprogram.testing import ScriptedProvider, call
    >>> p = ScriptedProvider([call("add", a=1, b=2), "The sum is 3."])
    >>> def add(a: int, b: int) -> int:
    ...     \"\"\"Add two integers.\"\"\"
    ...     return a + b
    >>> Runtime(p).exec("What is 1 + 2?", tools=[add])
    'The sum is 3.'
    >>> p.requests[1].messages[-1].content
    '3'
"""

from __future__ import annotations

from openprogram.providers._allow import (
    ALLOW_ENV_VAR,
    allow_model_requests,
    block_model_requests,
    model_requests_allowed,
)
from openprogram.testing._fakes import (
    FunctionProvider,
    Reply,
    ScriptedProvider,
    ScriptExhaustedError,
    call,
    text,
)
from openprogram.testing._json_values import UnsupportedSchemaError, example_value
from openprogram.testing._normalize import normalize_request
from openprogram.testing._record import (
    RecordingProvider,
    ReplayMissError,
    ReplayProvider,
    record,
    replay,
)
from openprogram.testing._schema_provider import SchemaProvider

__all__ = [
    "ALLOW_ENV_VAR",
    "FunctionProvider",
    "RecordingProvider",
    "ReplayMissError",
    "ReplayProvider",
    "Reply",
    "SchemaProvider",
    "ScriptExhaustedError",
    "ScriptedProvider",
    "UnsupportedSchemaError",
    "allow_model_requests",
    "block_model_requests",
    "call",
    "example_value",
    "model_requests_allowed",
    "normalize_request",
    "record",
    "replay",
    "text",
]
