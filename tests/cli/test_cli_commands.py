"""The table of subcommands, and the outcomes of ``main`` that need no subprocess."""

from __future__ import annotations

import argparse
import doctest
import json
from pathlib import Path
from typing import Any

import pytest

import openprogram.cli._suggest
from openprogram.cli import _subcommands, main
from openprogram.cli._command import Command

HERE = Path(__file__).resolve().parent
MODEL = ["--model", "_cli_models:one_answer"]


@pytest.fixture(autouse=True)
def importable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.syspath_prepend(str(HERE))
    monkeypatch.delenv("OPENPROGRAM_MODEL", raising=False)


def _greet_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("name")


def _greet(args: argparse.Namespace) -> dict[str, Any]:
    if not args.json:
        print(f"hello {args.name}")
    return {"greeting": f"hello {args.name}"}


GREET = Command(name="greet", help="say hello", add_arguments=_greet_arguments, run=_greet)
SERVE = Command(
    name="serve",
    help="own stdout (a stdio server)",
    add_arguments=lambda p: None,
    run=lambda args: print("speaking my own protocol") or None,
    json_output=False,
)


def test_a_command_added_to_the_table_is_parsed_listed_and_gets_json(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(_subcommands, "COMMANDS", (*_subcommands.COMMANDS, GREET, SERVE))
    assert main(["--help"]) == 0
    assert "say hello" in capsys.readouterr().out
    assert main(["greet", "Ada"]) == 0
    assert capsys.readouterr().out == "hello Ada\n"
    assert main(["greet", "Ada", "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == {"greeting": "hello Ada"}
    assert main(["serve"]) == 0
    assert capsys.readouterr().out == "speaking my own protocol\n"
    assert main(["serve", "--json"]) == 2  # it does not take --json ...
    assert main(["--json", "serve"]) == 2  # ... before the command either
    assert "does not take --json" in capsys.readouterr().err


def test_result_values_follow_the_json_rules(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", "_cli_hostile:odd_values", "--json", *MODEL]) == 0
    assert json.loads(capsys.readouterr().out)["output"] == {
        "point": {"x": 1, "colour": "red"},
        "tags": ["a"],
        "pair": [1, 2],
        "odd": "<Unprintable object: str() raised RuntimeError>",
    }


def test_an_interrupt_is_exit_130_and_one_object(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", "_cli_hostile:interrupted", "--json", *MODEL]) == 130
    error = json.loads(capsys.readouterr().out)["error"]
    assert (error["type"], error["exit_code"]) == ("KeyboardInterrupt", 130)


def test_without_json_a_value_too_deep_for_str_is_printed_abbreviated(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["run", "_cli_hostile:very_deep", *MODEL]) == 0
    out = capsys.readouterr().out
    assert "result (" in out
    assert out.rstrip().endswith("[[[[[[...]]]]]]]")  # reprlib's abbreviation


def test_docstring_examples_run() -> None:
    result = doctest.testmod(openprogram.cli._suggest)
    assert result.attempted > 0
    assert result.failed == 0
