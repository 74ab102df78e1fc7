"""``openprogram demo`` and ``openprogram run`` through ``main(argv)``, on scripted providers."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from openprogram.cli import main

HERE = Path(__file__).resolve().parent


@pytest.fixture(autouse=True)
def importable_fakes(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make ``_cli_models`` importable by name, as ``--model _cli_models:...`` needs."""
    monkeypatch.syspath_prepend(str(HERE))
    monkeypatch.delenv("OPENPROGRAM_MODEL", raising=False)
    import _cli_models

    _cli_models.LAST.clear()
    _cli_models.SEEN.clear()


def last_requests() -> list[object]:
    import _cli_models

    return list(_cli_models.LAST[-1].requests)


def test_demo_prints_the_nested_run_tree(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["demo", "--model", "_cli_models:demo_model"]) == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert lines[0] == "openprogram demo — nested agentic functions on scripted:scripted"

    def indent_of(fragment: str) -> int:
        line = next(x for x in lines if fragment in x)
        return len(line) - len(line.lstrip())

    # the inner exec and its weather call sit one level deeper than the outer ones
    assert indent_of("⚙ get_weather(city='Paris')") > indent_of("⚙ research_destination(")
    assert indent_of("✓ get_weather done") > indent_of("✓ research_destination done")
    assert sum("▶ exec" in x for x in lines) == 2
    assert sum("■ done: stop" in x for x in lines) == 2
    assert "Paris: sunny, 21 degrees celsius" in out  # the tool's output, summarised
    assert "tokens" in out
    assert "model replied in" in out
    assert out.rstrip().endswith("picnic in the Tuileries.")


def test_demo_destination_reaches_the_model(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["demo", "Tokyo", "--model", "_cli_models:demo_model"]) == 0
    first = last_requests()[0]
    assert "Tokyo" in str(first.messages[0].content)  # type: ignore[attr-defined]


def test_demo_json_is_one_summary_on_stdout_and_events_on_stderr(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["demo", "--json", "--model", "_cli_models:demo_model"]) == 0
    captured = capsys.readouterr()
    summary = json.loads(captured.out)
    assert summary["result"].endswith("picnic in the Tuileries.")
    assert summary["model_calls"] == 4
    assert summary["tool_calls"] == 2
    assert summary["stop_reason"] == "stop"
    assert summary["model"].startswith("scripted")
    assert summary["seconds"] >= 0
    assert {"input_tokens", "output_tokens"} <= set(summary)
    events = [json.loads(line) for line in captured.err.splitlines()]
    started = {e["tool_name"]: e for e in events if e["kind"] == "ToolCallStarted"}
    invoked = {e["run_id"]: e for e in events if e["kind"] == "AgentInvoked"}
    inner = invoked[started["get_weather"]["run_id"]]
    assert inner["parent_run_id"] is not None  # the weather call ran in the nested exec
    assert inner["depth"] == 2
    # no payloads without --trace-payloads: neither arguments nor results
    assert all(e["arguments"] is None for e in events if e["kind"] == "ToolCallStarted")
    assert all(e["output"] is None for e in events if e["kind"] == "ToolCallCompleted")
    assert summary["output"] == summary["result"]


def test_trace_payloads_puts_values_into_json_events(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["demo", "--json", "--trace-payloads", "--model", "_cli_models:demo_model"]
    assert main(argv) == 0
    events = [json.loads(line) for line in capsys.readouterr().err.splitlines()]
    started = {e["tool_name"]: e for e in events if e["kind"] == "ToolCallStarted"}
    assert started["get_weather"]["arguments"] == {"city": "Paris"}


def test_trace_payloads_without_json_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["demo", "--trace-payloads", "--model", "_cli_models:demo_model"]) == 2
    assert "--trace-payloads applies to --json events" in capsys.readouterr().err


def test_run_passes_positional_keyword_and_json_values(capsys: pytest.CaptureFixture[str]) -> None:
    import _cli_models

    argv = ["run", "_cli_models:ask", "How old?", "days=3", "strict=true"]
    assert main([*argv, "--model", "_cli_models:one_answer"]) == 0
    assert _cli_models.SEEN == [("How old?", 3, True)]
    assert "Forty-two." in capsys.readouterr().out
    (request,) = last_requests()
    assert request.tools == ()  # type: ignore[attr-defined]


def test_run_json_encodes_a_pydantic_result_as_an_object(
    capsys: pytest.CaptureFixture[str],
) -> None:
    argv = ["run", "_cli_models:structured", "q", "--json", "--model", "_cli_models:one_answer"]
    assert main(argv) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["result"] == {"text": "Forty-two.", "words": 1}
    assert summary["model_calls"] == 1
    assert summary["tool_calls"] == 0


def test_wrong_arguments_fail_before_any_model_call(capsys: pytest.CaptureFixture[str]) -> None:
    import _cli_models

    assert main(["run", "_cli_models:ask", "q", "--model", "_cli_models:one_answer"]) == 2
    err = capsys.readouterr().err
    assert "days: missing required argument" in err
    assert "ask(question: string, days: integer, strict?: boolean)" in err
    assert _cli_models.LAST == []  # the factory was never even called


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["run", "no_colon_here"], "expected module:attribute"),
        (["run", "_cli_models:nope", "x"], "has no attribute 'nope'"),
        (["run", "_cli_models:NOT_A_PROVIDER"], "not a function"),
        (["run", "no_such_module_xyz:f"], "No module named 'no_such_module_xyz'"),
        (["demo", "--model", "no_such_module_xyz:make"], "neither a provider prefix"),
        (["demo", "--model", "_cli_models:NOT_A_PROVIDER"], "gave int, not a Provider"),
        (["demo", "--model", "_cli_models:ask"], "factory must take no required arguments"),
        (["demo", "--model", "nonsense"], "unknown provider string 'nonsense'"),
    ],
)
def test_usage_errors_exit_2_with_a_clear_message(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ")
    assert message in err


def test_a_failed_run_exits_1_and_json_reports_the_error(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code = main(["demo", "--json", "--model", "_cli_models:failing_model"])
    assert code == 1
    out = capsys.readouterr().out.strip().splitlines()
    error = json.loads(out[-1])["error"]
    assert error["type"] == "LLMError"
    assert "the scripted server is down" in error["message"]
    assert error["exit_code"] == 1


def test_no_provider_at_all_says_what_to_set(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import openprogram.cli._model as model_module

    # as on a machine without the local extra: nothing to fall back to
    monkeypatch.setattr(model_module, "default_model_string", lambda: None)
    assert main(["demo"]) == 2
    err = capsys.readouterr().err
    assert "no provider configured" in err
    assert "OPENPROGRAM_MODEL" in err
    assert "--model" in err


def test_openprogram_model_env_var_is_the_default(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENPROGRAM_MODEL", "_cli_models:demo_model")
    assert main(["demo", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["model_calls"] == 4


def test_with_json_progress_lines_are_json_lines_too(capsys: pytest.CaptureFixture[str]) -> None:
    argv = [
        "run",
        "_cli_models:ask",
        "q",
        "days=1",
        "--json",
        "--model",
        "_cli_models:progress_model",
    ]
    assert main(argv) == 0
    captured = capsys.readouterr()
    assert json.loads(captured.out)["output"] == "Forty-two."
    lines = [json.loads(line) for line in captured.err.splitlines()]  # every line is JSON
    assert {"kind": "Progress", "message": "starting the local model server (fake)"} in lines


def test_without_json_progress_lines_go_to_stderr(capsys: pytest.CaptureFixture[str]) -> None:
    assert (
        main(["run", "_cli_models:ask", "q", "days=1", "--model", "_cli_models:progress_model"])
        == 0
    )
    captured = capsys.readouterr()
    assert "openprogram: starting the local model server (fake)" in captured.err
    assert "starting" not in captured.out


def _without_the_large_model(monkeypatch: pytest.MonkeyPatch) -> None:
    """As on a machine without the ``local-large`` extra (nothing can start)."""
    import importlib.util

    from openprogram.providers.local._profile import QWEN_CODER_15B

    real = importlib.util.find_spec
    hidden = {"xllamacpp"} | {p.module for p in QWEN_CODER_15B.parts}
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda n, p=None: None if n in hidden else real(n, p)
    )


def test_run_takes_the_large_local_model_and_says_how_to_install_it(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from openprogram.testing import allow_model_requests

    _without_the_large_model(monkeypatch)
    with allow_model_requests():
        code = main(["run", "_cli_models:ask", "q", "3", "--model", "local:qwen2.5-coder-1.5b"])
    assert code == 2
    captured = capsys.readouterr()
    assert "▶ exec [qwen2.5-coder-1.5b]" in captured.out  # the run used the 1.5B model
    assert "the local model qwen2.5-coder-1.5b needs the 'local-large' extra" in captured.err
    assert "pip install 'openprogram-ai[local-large]'" in captured.err


def test_run_refuses_an_unknown_local_model_listing_the_embedded_ones(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["run", "_cli_models:ask", "q", "3", "--model", "local:qwen2.5-coder-7b"]) == 2
    err = capsys.readouterr().err
    assert "unknown local model 'qwen2.5-coder-7b'" in err
    assert "'qwen2.5-coder-0.5b', 'qwen2.5-coder-1.5b'" in err


def test_run_help_lists_the_embedded_models(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", "--help"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "local:qwen2.5-coder-0.5b (the default)" in out
    assert "local:qwen2.5-coder-1.5b (extra local-large)" in out
    assert "local:qwen2.5-coder-0.5b-q4_0 (extra local, requantized: faster)" in out
