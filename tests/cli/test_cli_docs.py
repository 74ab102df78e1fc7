"""The command-line page: every flag is described, every example command runs as written."""

from __future__ import annotations

import argparse
import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

import openprogram
from openprogram.cli._parser import build_parser

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "cli.md"
PACKAGE_ROOT = Path(openprogram.__file__).resolve().parents[1]
_BASH = re.compile(r"(<!-- no-run: [^>]+-->\n)?^```bash\n(.*?)^```", re.DOTALL | re.MULTILINE)
_EXIT = re.compile(r"#\s*exit (\d+)\s*$")


def _flags(parser: argparse.ArgumentParser) -> set[str]:
    found: set[str] = set()
    for action in parser._actions:
        found.update(o for o in action.option_strings if o.startswith("--"))
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                found |= _flags(sub)
    return found


def test_every_flag_is_documented() -> None:
    section = PAGE.read_text(encoding="utf-8").split("## Every option", 1)[1]
    flags = _flags(build_parser())
    assert {"--version", "--help", "--json", "--trace-payloads", "--module", "--registry"} <= flags
    missing = sorted(f for f in flags if f"`{f}" not in section)
    assert missing == []


def _examples() -> list[tuple[str, int]]:
    """``(command line, expected exit code)`` of every runnable ``bash`` block line."""
    found = []
    for match in _BASH.finditer(PAGE.read_text(encoding="utf-8")):
        if match.group(1):
            continue  # marked no-run
        for line in match.group(2).splitlines():
            if line.startswith("python3 -m openprogram"):
                code = _EXIT.search(line)
                found.append((line, int(code.group(1)) if code else 0))
    return found


def test_the_page_has_runnable_examples() -> None:
    lines = [line for line, _ in _examples()]
    assert len(lines) >= 8
    assert any("--json" in line and "run " in line for line in lines)


@pytest.mark.parametrize(("line", "code"), _examples())
def test_each_example_runs_as_written(line: str, code: int) -> None:
    argv = shlex.split(line, comments=True)[3:]  # after "python3 -m openprogram"
    env = {**os.environ, "PYTHONPATH": str(PACKAGE_ROOT)}
    env.pop("OPENPROGRAM_MODEL", None)
    done = subprocess.run(
        [sys.executable, "-m", "openprogram", *argv],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == code, done.stderr
    if "--json" in argv:
        assert isinstance(json.loads(done.stdout), dict)
    if code:
        assert "Traceback" not in done.stderr
