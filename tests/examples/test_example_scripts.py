"""Each example is a runnable script: it imports and parses its command line standalone."""

from __future__ import annotations

import subprocess
import sys

import pytest
from _example_loader import EXAMPLES


@pytest.mark.parametrize("name", ["trip_planner", "file_organizer", "ticket_router"])
def test_example_script_help(name: str) -> None:
    done = subprocess.run(
        [sys.executable, str(EXAMPLES / f"{name}.py"), "--help"],
        cwd=EXAMPLES.parent,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "--model" in done.stdout
