"""The command as users start it (``python -m openprogram``), and the live view's spinner."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import time
from pathlib import Path

from openprogram import Runtime
from openprogram.cli._tree import TreeView
from openprogram.providers import ProviderRequest
from openprogram.testing import FunctionProvider

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent


def test_python_dash_m_runs_the_demo_and_prints_json() -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop("OPENPROGRAM_MODEL", None)
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "openprogram",
            "demo",
            "--json",
            "--model",
            "_cli_models:demo_model",
        ],
        cwd=HERE,  # the CLI imports --model targets from the current directory
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    assert summary["model_calls"] == 4
    assert "Tuileries" in summary["result"]
    kinds = [json.loads(line)["kind"] for line in done.stderr.splitlines()]
    assert kinds[0] == "AgentInvoked"
    assert kinds[-1] == "AgentEnd"


def test_python_dash_m_usage_error_exits_2() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "openprogram", "run", "missing_colon"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 2
    assert "expected module:attribute" in done.stderr


def test_the_spinner_shows_while_the_model_thinks() -> None:
    def slow(request: ProviderRequest) -> str:
        time.sleep(0.35)  # long enough for a few 0.1 s spinner frames
        return "done"

    out = io.StringIO()
    view = TreeView(out, spinner=True)
    with view:
        Runtime(FunctionProvider(slow), observers=[view]).exec("hi", toolset="none")
    text = out.getvalue()
    assert "model is thinking…" in text
    assert "\r\033[K" in text  # the spinner line is cleared before the next tree line
    assert text.rstrip().endswith("tokens")  # the final "■ done: ..." line


def test_no_spinner_when_not_a_terminal() -> None:
    out = io.StringIO()  # isatty() is False
    view = TreeView(out)
    with view:
        Runtime(FunctionProvider(lambda r: "done"), observers=[view]).exec("hi", toolset="none")
    assert "thinking" not in out.getvalue()
    assert "▶ exec" in out.getvalue()
