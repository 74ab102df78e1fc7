"""Every flag of the command is described in the quickstart's command-line section."""

from __future__ import annotations

import argparse
from pathlib import Path

from openprogram.cli._parser import build_parser as _parser

QUICKSTART = Path(__file__).resolve().parents[2] / "docs" / "quickstart.md"


def _flags(parser: argparse.ArgumentParser) -> set[str]:
    found: set[str] = set()
    for action in parser._actions:
        found.update(o for o in action.option_strings if o.startswith("--") and o != "--help")
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                found |= _flags(sub)
    return found


def test_every_flag_is_documented() -> None:
    text = QUICKSTART.read_text(encoding="utf-8")
    section = text.split("## 4. Run it from the command line", 1)[1].split("## 5.", 1)[0]
    flags = _flags(_parser())
    assert {"--version", "--json", "--trace-payloads", "--module", "--registry"} <= flags
    missing = sorted(f for f in flags if f"`{f}" not in section)
    assert missing == []
