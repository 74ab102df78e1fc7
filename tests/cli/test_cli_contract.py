"""The command's contract, in real subprocesses: async targets, schema-checked arguments,
exit codes, one JSON object with ``--json``, ``--version``, ``tools --module/--registry``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import openprogram

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
MODEL = ["--model", "_cli_models:one_answer"]


def cli(*argv: str, cwd: Path = HERE) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
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


def one_json_object(stdout: str) -> dict[str, object]:
    value = json.loads(stdout)  # raises unless stdout is exactly one JSON document
    assert isinstance(value, dict)
    return value


def test_an_async_function_is_awaited() -> None:
    done = cli("run", "_cli_contract:ask_async", "hi", "--json", *MODEL)
    assert done.returncode == 0, done.stderr
    assert one_json_object(done.stdout)["output"] == "async says: Forty-two."


def test_arguments_are_read_by_the_functions_schema() -> None:
    done = cli("run", "_cli_contract:trip", "42", "3", "--json", *MODEL)
    assert done.returncode == 0, done.stderr
    assert one_json_object(done.stdout)["output"] == "str:42 int:3"


def test_a_value_the_schema_rejects_is_a_usage_error_with_the_models_message() -> None:
    done = cli("run", "_cli_contract:trip", "Rome", "three", *MODEL)
    assert done.returncode == 2
    assert "days: " in done.stderr
    assert "integer" in done.stderr
    assert "trip(destination: string, days: integer)" in done.stderr
    assert "Traceback" not in done.stderr


def test_an_exception_in_user_code_prints_its_traceback_and_exits_1() -> None:
    done = cli("run", "_cli_contract:fails", "7", *MODEL)
    assert done.returncode == 1
    assert "Traceback (most recent call last)" in done.stderr
    assert "ValueError: user code failed on 7" in done.stderr
    assert '_cli_contract.py", line' in done.stderr  # the user's own frame is shown


def test_with_json_an_exception_is_one_error_object_on_stdout() -> None:
    done = cli("run", "_cli_contract:fails", "7", "--json", *MODEL)
    assert done.returncode == 1
    error = one_json_object(done.stdout)["error"]
    assert isinstance(error, dict)
    assert error["type"] == "ValueError"
    assert "user code failed on 7" in str(error["message"])
    assert error["exit_code"] == 1
    assert "Traceback" in str(error["traceback"])


def test_an_import_error_inside_the_users_module_is_user_code() -> None:
    done = cli("run", "_cli_broken_import:target", "--json", *MODEL)
    assert done.returncode == 1
    assert "Traceback" in done.stderr
    assert "openprogram_no_such_dependency_xyz" in done.stderr
    error = one_json_object(done.stdout)["error"]
    assert isinstance(error, dict)
    assert error["type"] == "ModuleNotFoundError"


def test_a_module_that_does_not_exist_is_a_usage_error() -> None:
    done = cli("run", "no_such_module_xyz:f", "--json", *MODEL)
    assert done.returncode == 2
    assert "Traceback" not in done.stderr
    error = one_json_object(done.stdout)["error"]
    assert isinstance(error, dict)
    assert "No module named 'no_such_module_xyz'" in str(error["message"])


def test_json_stdout_stays_one_object_when_user_code_prints() -> None:
    done = cli("run", "_cli_contract:chatty", "21", "--json", *MODEL)
    assert done.returncode == 0, done.stderr
    assert one_json_object(done.stdout)["output"] == 42
    assert "hello from user code" in done.stderr
    assert "raw fd write" in done.stderr


def test_a_bad_command_line_with_json_is_one_error_object() -> None:
    done = cli("run", "--json", "--no-such-flag")
    assert done.returncode == 2
    error = one_json_object(done.stdout)["error"]
    assert isinstance(error, dict)
    assert error["type"] == "UsageError"


def test_version() -> None:
    done = cli("--version")
    assert done.returncode == 0
    assert done.stdout.strip() == f"openprogram {openprogram.__version__}"


def test_tools_module_and_registry() -> None:
    by_module = cli("tools", "--module", "_cli_tools", "--json")
    assert by_module.returncode == 0, by_module.stderr
    offered = [t["name"] for t in one_json_object(by_module.stdout)["offered"]]  # type: ignore[union-attr]
    assert "read_note" in offered
    by_registry = cli("tools", "--registry", "_cli_registry:TOOLS", "--json")
    assert by_registry.returncode == 0, by_registry.stderr
    listed = one_json_object(by_registry.stdout)
    assert [t["name"] for t in listed["offered"]] == ["only_here"]  # type: ignore[union-attr]
    wrong = cli("tools", "--registry", "_cli_registry:NOT_A_REGISTRY")
    assert wrong.returncode == 2
    assert "not a openprogram Registry" in wrong.stderr


def test_the_command_line_example_of_the_docs_index_works() -> None:
    text = (ROOT / "docs" / "index.md").read_text(encoding="utf-8")
    line = next(x for x in text.splitlines() if "openprogram tools" in x and "--explain" in x)
    argv = line.split("#")[0].split()
    assert argv[:3] == ["python3", "-m", "openprogram"]
    done = cli(*argv[3:], cwd=ROOT)
    assert done.returncode == 0, done.stderr
    assert "move_file" in done.stdout


def test_a_class_is_not_a_runnable_target() -> None:
    done = cli("run", "_cli_contract:NotAFunction", "--json", *MODEL)
    assert done.returncode == 2
    error = one_json_object(done.stdout)["error"]
    assert isinstance(error, dict)
    assert "not a function" in str(error["message"])


def test_sys_exit_in_user_code_keeps_its_code_and_json_says_so() -> None:
    done = cli("run", "_cli_contract:quits", "--json", *MODEL)
    assert done.returncode == 3
    error = one_json_object(done.stdout)["error"]
    assert isinstance(error, dict)
    assert error["type"] == "SystemExit"


def test_the_schema_provider_smoke_tests_a_program_from_the_command_line() -> None:
    done = cli("demo", "--json", "--model", "openprogram.testing:SchemaProvider")
    assert done.returncode == 0, done.stderr
    summary = one_json_object(done.stdout)
    assert summary["output"] == "Called research_destination."
    assert summary["tool_calls"] == 2  # research_destination, then get_weather inside it


def test_tools_module_that_fails_to_import_is_user_code() -> None:
    done = cli("tools", "--module", "_cli_broken_import", "--json")
    assert done.returncode == 1
    assert "Traceback" in done.stderr
    error = one_json_object(done.stdout)["error"]
    assert isinstance(error, dict)
    assert error["type"] == "ModuleNotFoundError"
