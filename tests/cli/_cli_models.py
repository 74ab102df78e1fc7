"""Targets and provider factories the CLI tests pass as ``module:attr`` (no model, no network).

Each factory returns a fresh provider and keeps it in ``LAST`` so a test can
read the requests it received.
"""

from __future__ import annotations

from pydantic import BaseModel

from openprogram import LLMError, Runtime, agentic_function
from openprogram.providers import ProviderRequest
from openprogram.testing import FunctionProvider, ScriptedProvider, call

LAST: list[ScriptedProvider | FunctionProvider] = []
SEEN: list[tuple[object, ...]] = []


def demo_model() -> ScriptedProvider:
    """The demo's four model calls: outer picks the researcher, inner picks the weather."""
    provider = ScriptedProvider(
        [
            call("research_destination", city="Paris"),
            call("get_weather", city="Paris"),
            "Paris: sunny, 21 degrees celsius.",
            "Sunny Paris: walk along the Seine, then a picnic in the Tuileries.",
        ]
    )
    LAST.append(provider)
    return provider


def one_answer() -> ScriptedProvider:
    provider = ScriptedProvider(["Forty-two."])
    LAST.append(provider)
    return provider


def failing_model() -> FunctionProvider:
    def fail(request: ProviderRequest) -> str:
        raise LLMError("the scripted server is down", reason="server", http_status=503)

    provider = FunctionProvider(fail)
    LAST.append(provider)
    return provider


NOT_A_PROVIDER = 42


@agentic_function(register_globally=False)
def ask(question: str, days: int, runtime: Runtime, strict: bool = False) -> str:
    """Ask the model one question.

    Args:
        question: What to ask.
        days: A number, to check JSON values arrive typed.
        strict: A flag, to check keyword arguments.
    """
    SEEN.append((question, days, strict))
    return str(runtime.exec(question, toolset="none"))


class Answer(BaseModel):
    text: str
    words: int


@agentic_function(register_globally=False)
def structured(question: str, runtime: Runtime) -> Answer:
    """Return a pydantic model, to check --json encodes it as an object.

    Args:
        question: What to ask.
    """
    reply = str(runtime.exec(question, toolset="none"))
    return Answer(text=reply, words=len(reply.split()))


def progress_model() -> FunctionProvider:
    """Reports a first-use progress step before answering, like the local model starting."""
    from openprogram.providers.local._embedded import report

    def answer(request: ProviderRequest) -> str:
        report("starting the local model server (fake)")
        return "Forty-two."

    provider = FunctionProvider(answer)
    LAST.append(provider)
    return provider
