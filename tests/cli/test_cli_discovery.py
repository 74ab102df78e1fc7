"""What a new user types: ``tools --module`` finds the module's own tools, typos get a
"did you mean", and every usage error shows the usage line."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from openprogram import default_registry
from openprogram.cli import main

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
OURS = ("_cli_two_registries", "_cli_mixed", "_cli_tools")


@pytest.fixture(autouse=True)
def importable(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The repository's examples and this folder's modules importable; the registry restored."""
    monkeypatch.chdir(ROOT)  # the command imports from the current directory
    monkeypatch.syspath_prepend(str(HERE))
    monkeypatch.delenv("OPENPROGRAM_MODEL", raising=False)
    before = set(default_registry.names())
    yield
    for name in OURS:
        sys.modules.pop(name, None)
    for name in set(default_registry.names()) - before:
        default_registry.unregister(name)


def listed(argv: list[str], capsys: pytest.CaptureFixture[str]) -> dict[str, Any]:
    assert main(["tools", *argv, "--json"]) == 0
    report: dict[str, Any] = json.loads(capsys.readouterr().out)
    return report


def offered(report: dict[str, Any]) -> list[str]:
    return [t["name"] for t in report["offered"]]


def test_a_module_with_unregistered_tools_lists_them(capsys: pytest.CaptureFixture[str]) -> None:
    report = listed(["--module", "examples.trip_planner"], capsys)
    assert offered(report) == ["get_weather", "free_weekends", "research_destination", "plan_trip"]
    assert report["registry"] == "tools of examples.trip_planner"
    assert "register_globally=False" in report["notes"][0]


def test_without_json_the_note_goes_to_stderr(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["tools", "--module", "examples.trip_planner"]) == 0
    captured = capsys.readouterr()
    assert captured.out.startswith("offered (4):")
    assert captured.err.startswith("note: examples.trip_planner registers its tools in no registry")


def test_a_module_with_its_own_registry_lists_it(capsys: pytest.CaptureFixture[str]) -> None:
    report = listed(["--module", "examples.file_organizer"], capsys)
    assert offered(report) == ["move_file", "organize"]
    assert report["registry"] == "examples.file_organizer:TOOLS"
    assert "--registry examples.file_organizer:TOOLS" in report["notes"][0]
    explained = listed(["--module", "examples.file_organizer", "--explain", "move_file"], capsys)
    assert explained["offered"] is True


def test_a_module_with_two_registries_says_to_choose(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["tools", "--module", "_cli_two_registries"]) == 2
    err = capsys.readouterr().err
    assert "defines several registries (_cli_two_registries:FILES, _cli_two_registries:MAIL)" in err
    assert "--registry _cli_two_registries:FILES" in err
    report = listed(["--registry", "_cli_two_registries:MAIL"], capsys)
    assert offered(report) == ["send_mail"]
    assert report["notes"] == []


def test_the_default_registry_wins_and_a_registry_beside_it_is_named(
    capsys: pytest.CaptureFixture[str],
) -> None:
    report = listed(["--module", "_cli_mixed"], capsys)
    assert "mixed_default_tool" in offered(report)
    assert "mixed_extra_tool" not in offered(report)
    assert report["registry"] == "default"
    assert report["notes"] == [
        "_cli_mixed:EXTRA is a Registry of its own, not listed here: list it with "
        "--registry _cli_mixed:EXTRA"
    ]


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (
            ["run", "examples.trip_planner:plan_trp"],
            "module 'examples.trip_planner' has no attribute 'plan_trp'; did you mean 'plan_trip'?",
        ),
        (
            ["run", "examples.trip_planner:zzz"],
            "has no attribute 'zzz'; it defines free_weekends, get_weather, main, plan_trip, "
            "research_destination",
        ),
        (["run", "examples.trip_planer:plan_trip"], "did you mean 'examples.trip_planner'"),
        (["run", "exampels.trip_planner:plan_trip"], "did you mean 'examples'?"),
        (["rn", "x:y"], "unknown command 'rn'; did you mean 'run' or 'runs'?"),
        (
            ["tools", "--module", "examples.file_organizer", "--explain", "move_fle"],
            "did you mean 'move_file'?",
        ),
        (["tools", "--registry", "_cli_two_registries:FILE"], "did you mean 'FILES'?"),
    ],
)
def test_a_typo_gets_the_closest_name(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert message in err
    assert "Traceback" not in err


@pytest.mark.parametrize(
    ("argv", "usage"),
    [
        (["run"], "usage: openprogram run [-h]"),
        (["tools", "--no-such-flag"], "usage: openprogram tools [-h]"),
        (["run", "--js"], "usage: openprogram run [-h]"),  # no abbreviations of --json
        (["rn"], "usage: openprogram [-h]"),
    ],
)
def test_usage_errors_show_the_usage_line(
    argv: list[str], usage: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith(usage)
    assert "error: " in err


def test_help_lists_the_commands_and_exits_0(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--help"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("usage: openprogram")
    assert "run any agentic function" in out
    assert "exit codes:" in out
