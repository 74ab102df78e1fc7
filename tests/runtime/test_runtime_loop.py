"""The tool loop: termination, cap, stop reasons, steering, follow-ups, tool_choice."""

from __future__ import annotations

import threading
import time

import pytest

from openprogram.events import ProviderError, ToolCallSkipped
from openprogram.exceptions import LLMError, MaxIterationsExceeded, UserError
from openprogram.messages import AssistantMessage, TextContent, ToolResultMessage, UserMessage
from openprogram.providers.base import ProviderRequest, ToolChoice
from openprogram.runtime import QUEUED_MESSAGE_SKIP, Runtime
from openprogram.testing import FunctionProvider, ScriptedProvider, call, text


def ping() -> str:
    """Answer pong."""
    return "pong"


def always_calls(request: ProviderRequest) -> object:
    return [text(f"turn {len(request.messages)}"), call("ping")]


@pytest.mark.parametrize(("asked", "made"), [(0, 1), (-5, 1), (1, 1), (3, 3), (50, 50), (1000, 50)])
def test_model_calls_are_capped_at_max_1_min_50_n(asked: int, made: int) -> None:
    provider = FunctionProvider(always_calls)
    rt = Runtime(provider)
    rt.exec("go", tools=[ping], max_iterations=asked)
    assert len(provider.requests) == made
    assert rt.last_run is not None
    assert rt.last_run.stop_reason == "max_iterations"
    assert rt.last_run.iterations == made


def test_on_max_iterations_return_gives_the_last_text_and_answers_every_call() -> None:
    provider = FunctionProvider(always_calls)
    rt = Runtime(provider)
    assert rt.exec("go", tools=[ping], max_iterations=2) == "turn 3"
    assert rt.last_run is not None
    last = rt.last_run.messages[-1]
    assert isinstance(last, ToolResultMessage)
    assert last.content == "pong"
    kinds = [e.kind for e in rt.last_run.events]
    assert "MaxIterationsReached" in kinds


def test_on_max_iterations_return_gives_empty_text_when_the_model_said_nothing() -> None:
    rt = Runtime(FunctionProvider(lambda r: call("ping")))
    assert rt.exec("go", tools=[ping], max_iterations=1) == ""


def test_on_max_iterations_raise() -> None:
    rt = Runtime(FunctionProvider(always_calls))
    with pytest.raises(MaxIterationsExceeded, match="max_iterations=2"):
        rt.exec("go", tools=[ping], max_iterations=2, on_max_iterations="raise")
    assert rt.last_run is not None
    assert rt.last_run.stop_reason == "max_iterations"
    assert rt.last_run.events[-1].kind == "AgentEnd"


def test_on_max_iterations_finish_makes_one_extra_call_without_tools_allowed() -> None:
    def reply(request: ProviderRequest) -> object:
        return "final from what I have" if request.tool_choice == "none" else call("ping")

    provider = FunctionProvider(reply)
    rt = Runtime(provider)
    out = rt.exec("go", tools=[ping], max_iterations=2, on_max_iterations="finish")
    assert out == "final from what I have"
    assert [r.tool_choice for r in provider.requests] == ["auto", "auto", "none"]
    assert provider.requests[-1].tools  # tools stay declared: the history references them
    assert rt.last_run is not None
    assert rt.last_run.stop_reason == "max_iterations"


def test_finish_call_that_still_calls_tools_gets_results_without_running_them() -> None:
    ran: list[int] = []

    def count() -> str:
        """Count a run."""
        ran.append(1)
        return "counted"

    rt = Runtime(FunctionProvider(lambda r: call("count")))
    rt.exec("go", tools=[count], max_iterations=1, on_max_iterations="finish")
    assert len(ran) == 1  # the capped turn's call ran; the finish turn's call did not
    assert rt.last_run is not None
    last = rt.last_run.messages[-1]
    assert isinstance(last, ToolResultMessage)
    assert last.is_error
    assert "limit" in last.content


def test_stop_reason_error_raises_llm_error() -> None:
    failed = AssistantMessage((), stop_reason="error", error="upstream exploded")
    rt = Runtime(ScriptedProvider([failed]))
    with pytest.raises(LLMError, match="upstream exploded"):
        rt.exec("x", tools=[])
    assert rt.last_run is not None
    assert rt.last_run.stop_reason == "error"
    assert len(rt.last_run.events_of(ProviderError)) == 1


def test_stop_reason_aborted_ends_the_run_with_the_text_so_far() -> None:
    aborted = AssistantMessage((TextContent("partial"), call("ping")), stop_reason="aborted")
    rt = Runtime(ScriptedProvider([aborted]))
    assert rt.exec("x", tools=[ping]) == "partial"
    assert rt.last_run is not None
    assert rt.last_run.stop_reason == "aborted"


def test_other_final_stop_reasons_are_reported() -> None:
    cut = AssistantMessage((TextContent("and then"),), stop_reason="length")
    rt = Runtime(ScriptedProvider([cut]))
    assert rt.exec("x", tools=[]) == "and then"
    assert rt.last_run is not None
    assert rt.last_run.stop_reason == "length"


def test_provider_exception_propagates_and_is_recorded() -> None:
    boom = LLMError("bad key", reason="auth", http_status=401, provider="scripted")
    rt = Runtime(ScriptedProvider([boom]))
    with pytest.raises(LLMError) as info:
        rt.exec("x", tools=[])
    assert info.value is boom
    assert rt.last_run is not None
    assert rt.last_run.stop_reason == "error"
    errors = rt.last_run.events_of(ProviderError)
    assert len(errors) == 1
    assert errors[0].http_status == 401


# -- steering and follow-ups ------------------------------------------------------------------


def test_steering_skips_unstarted_calls_and_is_delivered_before_the_next_call() -> None:
    rt: Runtime

    def first() -> str:
        """First step."""
        rt.steer("Stop, use the cheaper plan.")  # the user speaks while a tool runs
        return "one"

    def second() -> str:
        """Second step."""
        raise AssertionError("must not run")

    provider = ScriptedProvider([[call("first"), call("second")], "switched plans"])
    rt = Runtime(provider)
    out = rt.exec("go", tools=[first, second], parallel_tool_calls=False)
    assert out == "switched plans"
    msgs = provider.requests[1].messages
    assert isinstance(msgs[2], ToolResultMessage)
    assert msgs[2].content == "one"
    assert isinstance(msgs[3], ToolResultMessage)
    assert msgs[3].content == QUEUED_MESSAGE_SKIP
    assert msgs[4] == UserMessage("Stop, use the cheaper plan.")
    assert rt.last_run is not None
    skipped = rt.last_run.events_of(ToolCallSkipped)
    assert [e.reason for e in skipped] == ["queued_user_message"]


def test_steering_queued_during_the_model_call_skips_the_whole_batch() -> None:
    rt: Runtime
    calls = {"n": 0}

    def reply(request: ProviderRequest) -> object:
        calls["n"] += 1
        if calls["n"] == 1:
            rt.steer("never mind")
            return [call("ping"), call("ping")]
        return "ok"

    rt = Runtime(FunctionProvider(reply))
    rt.exec("go", tools=[ping])
    assert rt.last_run is not None
    results = [m for m in rt.last_run.messages if isinstance(m, ToolResultMessage)]
    assert [r.content for r in results] == [QUEUED_MESSAGE_SKIP] * 2


def test_steering_after_a_text_answer_keeps_the_loop_alive() -> None:
    rt: Runtime

    def reply(request: ProviderRequest) -> object:
        if len(request.messages) == 1:
            rt.steer("Also mention the weather.")
            return "Draft answer."
        return "Answer with weather."

    provider = FunctionProvider(reply)
    rt = Runtime(provider)
    assert rt.exec("go", tools=[]) == "Answer with weather."
    assert provider.requests[1].messages[-1] == UserMessage("Also mention the weather.")


def test_steering_queued_before_exec_joins_the_first_call() -> None:
    provider = ScriptedProvider(["ok"])
    rt = Runtime(provider)
    rt.steer("be brief")
    rt.exec("hello", tools=[])
    assert provider.requests[0].messages == (UserMessage("hello"), UserMessage("be brief"))


def test_steer_from_another_thread_is_delivered() -> None:
    started, proceed = threading.Event(), threading.Event()

    def wait_for_user() -> str:
        """Wait."""
        started.set()
        proceed.wait(5)
        return "waited"

    provider = ScriptedProvider([[call("wait_for_user"), call("wait_for_user")], "done"])
    rt = Runtime(provider)

    def user() -> None:
        started.wait(5)
        rt.steer("from the UI thread")
        proceed.set()

    helper = threading.Thread(target=user)
    helper.start()
    rt.exec("go", tools=[wait_for_user], parallel_tool_calls=False)
    helper.join()
    assert provider.requests[1].messages[-1] == UserMessage("from the UI thread")


def test_follow_ups_start_another_round_after_a_text_answer() -> None:
    provider = ScriptedProvider(["Bonjour.", "Hello in German: Hallo."])
    rt = Runtime(provider)
    rt.follow_up("Now in German.")
    assert rt.exec("Say hello in French.", tools=[]) == "Hello in German: Hallo."
    assert provider.requests[1].messages[-2:] == (
        provider.requests[1].messages[1],
        UserMessage("Now in German."),
    )
    assert rt.last_run is not None
    assert rt.last_run.iterations == 2


# -- tool_choice and parallel_tool_calls ------------------------------------------------------


@pytest.mark.parametrize(
    ("choice", "expected"),
    [
        ("required", ["required", "auto", "auto"]),
        (
            {"type": "function", "name": "ping"},
            [{"type": "function", "name": "ping"}, "auto", "auto"],
        ),
        ("auto", ["auto", "auto", "auto"]),
    ],
)
def test_required_and_forced_choices_bind_only_the_first_call(
    choice: ToolChoice, expected: list[object]
) -> None:
    provider = ScriptedProvider([call("ping"), call("ping"), "done"])
    Runtime(provider).exec("go", tools=[ping], tool_choice=choice)
    assert [r.tool_choice for r in provider.requests] == expected


def test_tool_choice_none_holds_for_every_call() -> None:
    provider = ScriptedProvider(["just text"])
    Runtime(provider).exec("go", tools=[ping], tool_choice="none")
    assert provider.requests[0].tool_choice == "none"


def test_forced_name_outside_the_menu_fails_before_any_request() -> None:
    provider = ScriptedProvider(["never"])
    with pytest.raises(UserError, match=r"'search'.*not in this exec's menu.*offered tools: ping"):
        Runtime(provider).exec(
            "go", tools=[ping], tool_choice={"type": "function", "name": "search"}
        )
    with pytest.raises(UserError, match="rejected"):
        Runtime(provider).exec(
            "go",
            tools=[ping],
            tools_deny=["ping"],
            tool_choice={"type": "function", "name": "ping"},
        )
    assert provider.requests == []


def test_required_with_an_empty_menu_fails_before_any_request() -> None:
    provider = ScriptedProvider(["never"])
    with pytest.raises(UserError, match="required"):
        Runtime(provider).exec("go", tools=[], tool_choice="required")
    assert provider.requests == []


def test_parallel_tool_calls_false_is_sent_and_runs_the_batch_in_order() -> None:
    spans: list[tuple[str, float, float]] = []

    def slow(tag: str) -> str:
        """Sleep a little."""
        start = time.monotonic()
        time.sleep(0.02)
        spans.append((tag, start, time.monotonic()))
        return tag

    provider = ScriptedProvider(
        [[call("slow", tag="a"), call("slow", tag="b"), call("slow", tag="c")], "ok"]
    )
    Runtime(provider).exec("go", tools=[slow], parallel_tool_calls=False)
    assert provider.requests[0].parallel_tool_calls is False
    assert [tag for tag, _, _ in spans] == ["a", "b", "c"]
    assert all(spans[i][2] <= spans[i + 1][1] for i in range(2))  # no overlap
