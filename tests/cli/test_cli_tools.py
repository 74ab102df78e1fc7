"""``openprogram tools``: the policy flags, ``--policy``, ``--explain`` and ``--json``."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from openprogram import default_registry
from openprogram.cli import main

HERE = Path(__file__).resolve().parent
MODULE = ["--module", "_cli_tools"]


@pytest.fixture(autouse=True)
def fresh_tools(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Each test imports ``_cli_tools`` anew; its tools leave the default registry after."""
    monkeypatch.syspath_prepend(str(HERE))
    before = set(default_registry.names())
    sys.modules.pop("_cli_tools", None)
    yield
    sys.modules.pop("_cli_tools", None)
    for name in set(default_registry.names()) - before:
        default_registry.unregister(name)


def run_json(argv: list[str], capsys: pytest.CaptureFixture[str]) -> dict[str, object]:
    assert main(["tools", *MODULE, *argv, "--json"]) == 0
    parsed: dict[str, object] = json.loads(capsys.readouterr().out)
    return parsed


def names(entries: object) -> list[str]:
    assert isinstance(entries, list)
    return [e["name"] for e in entries if e["name"] in _OURS]


_OURS = {"read_note", "delete_note", "book_hotel", "internal_helper"}


def rejected(report: dict[str, object]) -> dict[str, dict[str, str]]:
    entries = report["rejected"]
    assert isinstance(entries, list)
    return {e["name"]: e for e in entries if e["name"] in _OURS}


def test_json_lists_offered_deferred_and_hidden_with_reasons(
    capsys: pytest.CaptureFixture[str],
) -> None:
    report = run_json(["--policy", "toolset=files,source=telegram"], capsys)
    assert names(report["offered"]) == ["read_note"]
    (read_note,) = [e for e in report["offered"] if e["name"] == "read_note"]  # type: ignore[attr-defined]
    assert read_note == {"name": "read_note", "kind": "function", "summary": "Read a note."}
    hidden = rejected(report)
    assert hidden["delete_note"]["layer"].startswith("L3")
    assert "telegram" in hidden["delete_note"]["reason"]
    assert hidden["internal_helper"]["layer"].startswith("L2")
    assert report["policy"] == {
        "toolset": "files",
        "source": "telegram",
        "allow": None,
        "deny": [],
        "disabled": [],
    }


def test_deferred_tools_are_listed_apart(capsys: pytest.CaptureFixture[str]) -> None:
    report = run_json([], capsys)
    assert names(report["deferred"]) == ["book_hotel"]
    assert names(report["offered"]) == ["read_note", "delete_note"]


def test_policy_value_means_the_same_as_separate_flags(
    capsys: pytest.CaptureFixture[str],
) -> None:
    joined = run_json(["--policy", "deny=read_note+book_hotel,disabled=delete_note"], capsys)
    separate = run_json(["--deny", "read_note,book_hotel", "--disabled", "delete_note"], capsys)
    assert joined == separate
    assert names(joined["offered"]) == []
    assert {n: e["layer"][:2] for n, e in rejected(joined).items()} == {
        "read_note": "L5",
        "delete_note": "L5",
        "book_hotel": "L5",
        "internal_helper": "L2",
    }


def test_allow_caps_what_is_offered(capsys: pytest.CaptureFixture[str]) -> None:
    report = run_json(["--policy", "allow=read_note"], capsys)
    assert names(report["offered"]) == ["read_note"]
    assert report["policy"]["allow"] == ["read_note"]  # type: ignore[index]


def test_explain_names_the_layer(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["tools", *MODULE, "--source", "telegram", "--explain", "delete_note"]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert out.startswith("delete_note is hidden by L3")
    assert "telegram" in out
    assert main(["tools", *MODULE, "--explain", "read_note", "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == {
        "name": "read_note",
        "offered": True,
        "rejection": None,
        "registry": "default",
        "notes": [],
    }


def test_text_output_groups_the_three_lists(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["tools", *MODULE, "--toolset", "files"]) == 0
    out = capsys.readouterr().out
    offered, rest = out.split("deferred, loadable with tool_search")
    assert "read_note: Read a note." in offered
    assert "delete_note: Delete a note." in offered
    assert "book_hotel: L2b" in rest


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--policy", "deny=a", "--deny", "b"], "deny is given both in --policy and as --deny"),
        (["--policy", "colour=red"], "'colour=red' is not key=value with a key among"),
        (["--policy", "deny"], "'deny' is not key=value"),
        (["--policy", "deny=a,deny=b"], "'deny' is given twice"),
        (["--toolset", "nope"], "unknown toolset 'nope'"),
        (["--explain", "no_such_tool"], "no tool of that name is registered"),
        (["--module", "no_such_module_xyz"], "No module named 'no_such_module_xyz'"),
    ],
)
def test_bad_policies_exit_2_with_a_clear_message(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["tools", *MODULE, *argv]) == 2
    assert message in capsys.readouterr().err
