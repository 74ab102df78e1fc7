"""A reply that starts copying the template's request for an answer is stopped there.

Copying a long tool result into its answer, the 0.5B ran on into the sentence
the chat template ends a result turn with ("Use these results to write a
complete answer to my request: …", measured on the README tour). Once a result
is in, the local provider asks the server to stop at those sentences; a
``stop`` of the user's own (``extra_body``) is kept beside them.
"""

from __future__ import annotations

from typing import Any

import jinja2
import pytest

from openprogram import Runtime, function
from openprogram.exceptions import UserError
from openprogram.providers.local import LOCAL_MODEL, PROFILES, LocalProvider
from openprogram.providers.local._profile import ECHO_STOPS
from openprogram.registry import Registry

from .._server import Reply, WireServer
from ._llama import completion, provider

# model_requests: fake llama.cpp servers on 127.0.0.1, talked to on purpose (tests/conftest.py)
pytestmark = [pytest.mark.usefixtures("clean_env"), pytest.mark.model_requests]

TOOLS = Registry()


@function(registry=TOOLS)
def get_weather(city: str) -> str:
    """Current weather for a city.

    Args:
        city: City name.
    """
    return f"{city}: sunny, 21 C"


def weather_run(wire: WireServer, **options: Any) -> list[dict[str, Any]]:
    """Ask for the weather: one call, its result, an answer; the request bodies sent."""
    wire.push(Reply(body=completion('[{"name": "get_weather", "arguments": {"city": "Paris"}}]')))
    wire.push(Reply(body=completion("Sunny, 21 C in Paris.")))
    answer = Runtime(provider(wire, **options)).exec("Weather in Paris?", tools=[get_weather])
    assert answer == "Sunny, 21 C in Paris."
    return [r.json for r in wire.requests]


def test_the_template_sentences_stop_a_reply_once_a_result_is_in(wire: WireServer) -> None:
    first, second = weather_run(wire)
    assert "stop" not in first  # no result yet: the template has not written them
    assert second["stop"] == list(ECHO_STOPS)


@pytest.mark.parametrize("stop", ["END", ["END", "###"], ("END", "###")])
def test_the_users_stops_are_kept_beside_them(wire: WireServer, stop: str | list[str]) -> None:
    first, second = weather_run(wire, extra_body={"stop": stop})
    own = [stop] if isinstance(stop, str) else list(stop)
    assert first["stop"] == own
    assert second["stop"] == [*ECHO_STOPS, *own]


@pytest.mark.parametrize("stop", [5, ["END", 5], {"END": True}])
def test_a_stop_llama_cpp_cannot_take_is_refused_when_the_provider_is_made(stop: Any) -> None:
    with pytest.raises(UserError, match=r"extra_body=\{'stop': .*a string or a list of strings"):
        LocalProvider(extra_body={"stop": stop})


def render(functions: list[dict[str, Any]]) -> str:
    call = {"name": "get_weather", "arguments": {"city": "Paris"}}
    messages = [
        {"role": "user", "content": "Weather in Paris?"},
        {"role": "assistant", "content": None, "tool_calls": [{"function": call}]},
        {"role": "tool", "content": "Paris: sunny, 21 C"},
    ]
    template = jinja2.Environment().from_string(PROFILES[LOCAL_MODEL].chat_template())
    return template.render(messages=messages, functions=functions, add_generation_prompt=True)


def test_each_stop_is_a_sentence_the_template_writes_after_a_result() -> None:
    spec = {"name": "get_weather", "parameters": {"type": "object", "properties": {}}}
    may_call, answer_only = render([spec]), render([])
    tail = "Paris: sunny, 21 C\n\n"
    assert tail + ECHO_STOPS[0] in may_call  # functions offered: "another call, or answer"
    assert tail + ECHO_STOPS[1] in answer_only  # asked for the answer only
