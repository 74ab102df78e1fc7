"""``--json`` prints exactly one JSON object on stdout, and the exit codes hold, whatever the
user's code does: real ``python -m openprogram`` processes on hostile targets."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import openprogram

HERE = Path(__file__).resolve().parent
PACKAGE_ROOT = Path(openprogram.__file__).resolve().parents[1]  # the checkout under test
MODEL = ["--model", "_cli_models:one_answer"]


def cli(*argv: str, cwd: Path = HERE) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(PACKAGE_ROOT)}
    env.pop("OPENPROGRAM_MODEL", None)
    return subprocess.run(
        [sys.executable, "-m", "openprogram", *argv],
        cwd=cwd,  # the CLI imports module:attr targets from the current directory
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def _no_constants(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def one_object(stdout: str) -> dict[str, Any]:
    """The one JSON object stdout holds (strict JSON: no NaN, nothing before or after)."""
    value = json.loads(stdout, parse_constant=_no_constants)
    assert isinstance(value, dict)
    return value


def error_of(done: subprocess.CompletedProcess[str]) -> dict[str, Any]:
    error = one_object(done.stdout)["error"]
    assert isinstance(error, dict)
    assert error["exit_code"] == done.returncode
    return error


def test_keys_json_cannot_hold_become_strings() -> None:
    done = cli("run", "_cli_hostile:tuple_keys", "--json", *MODEL)
    assert done.returncode == 0, done.stderr
    assert one_object(done.stdout)["output"] == {"(1, 2)": "pair", "3": "int", "null": "none"}


def test_nan_and_infinity_become_null() -> None:
    done = cli("run", "_cli_hostile:not_a_number", "--json", *MODEL)
    assert done.returncode == 0, done.stderr
    assert one_object(done.stdout)["output"] == {"nan": None, "inf": None, "one": 1.0}


@pytest.mark.parametrize(
    ("target", "problem"),
    [
        ("_cli_hostile:cycle", "output[0].again is a value that contains it (a cycle)"),
        ("_cli_hostile:very_deep", "is nested deeper than 500 levels"),
    ],
)
def test_a_result_without_json_form_is_one_error_object(target: str, problem: str) -> None:
    done = cli("run", target, "--json", *MODEL)
    assert done.returncode == 1
    error = error_of(done)
    assert error["type"] == "ResultNotJSONError"
    assert problem in error["message"]
    assert "Traceback" not in done.stderr  # not a crash of the command


@pytest.mark.parametrize("target", ["_cli_hostile:exits_zero", "_cli_exits_at_import:anything"])
def test_sys_exit_0_still_prints_one_object(target: str) -> None:
    done = cli("run", target, "--json", *MODEL)
    assert done.returncode == 0
    error = error_of(done)
    assert error["type"] == "SystemExit"
    assert "sys.exit(0)" in error["message"]


@pytest.mark.parametrize(
    ("target", "kind"),
    [("_cli_hostile:cancelled", "CancelledError"), ("_cli_hostile:halts", "Halt")],
)
def test_a_base_exception_from_user_code_is_user_code_failing(target: str, kind: str) -> None:
    done = cli("run", target, "--json", *MODEL)
    assert done.returncode == 1
    error = error_of(done)
    assert error["type"] == kind
    assert "Traceback" in error["traceback"]
    assert not error["message"].startswith("internal error")


def test_nothing_follows_the_object_a_thread_or_atexit_prints_to_stderr() -> None:
    done = cli("run", "_cli_hostile:prints_after_return", "--json", *MODEL)
    assert done.returncode == 0, done.stderr
    assert one_object(done.stdout)["output"] == "returned"
    assert "late line from a thread" in done.stderr
    assert "line from an atexit handler" in done.stderr


@pytest.mark.parametrize(
    ("argv", "key", "expected"),
    [
        (["--version", "--json"], "version", openprogram.__version__),
        (["--json", "--version"], "version", openprogram.__version__),
        (["run", "--help", "--json"], "help", "usage: openprogram run"),
    ],
)
def test_version_and_help_with_json_are_one_object(
    argv: list[str], key: str, expected: str
) -> None:
    done = cli(*argv)
    assert done.returncode == 0, done.stderr
    assert expected in one_object(done.stdout)[key]


def test_a_json_argument_nested_60000_deep_is_a_usage_error() -> None:
    deep = "[" * 60_000 + "]" * 60_000
    done = cli("run", "_cli_hostile:echo", f"value={deep}", "--json", *MODEL)
    assert done.returncode == 2
    error = error_of(done)
    assert "nested more than 500 levels deep" in error["message"]
    assert "Traceback" not in done.stderr


def test_a_file_path_as_module_is_a_usage_error() -> None:
    done = cli("run", "../../etc/passwd:x", "--json", *MODEL)
    assert done.returncode == 2
    error = error_of(done)
    assert "'../../etc/passwd' is not a module name" in error["message"]
    assert "Traceback" not in done.stderr


def test_a_script_path_gets_its_dotted_name() -> None:
    done = cli("run", "examples/trip_planner.py:plan_trip", cwd=PACKAGE_ROOT)
    assert done.returncode == 2
    assert "did you mean 'examples.trip_planner'?" in done.stderr


def test_bare_command_prints_the_usage_and_the_commands() -> None:
    done = cli()
    assert done.returncode == 2
    assert done.stderr.startswith("usage: openprogram")
    for word in ("demo", "run", "tools", "exit codes"):
        assert word in done.stderr
    assert "error: openprogram: no command given" in done.stderr


def test_json_without_a_command_is_one_usage_error_object() -> None:
    done = cli("--json")
    assert done.returncode == 2
    error = error_of(done)
    assert error["type"] == "UsageError"
    assert error["usage"].startswith("usage: openprogram")
