"""The repository is self-contained: no file points at design documents it does not ship.

Code, tests, docs, benchmarks and scripts explain themselves or point at
``docs/`` (``docs/design.md`` holds the architecture). A reference to a
document outside the repository leaves a reader with the repository alone
unable to follow it.
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# Directories that hold no sources of ours: caches, virtual environments, build output.
SKIP_DIRS = {
    ".git",
    ".hypothesis",
    ".mypy_cache",
    ".pytest_cache",
    ".ruff_cache",
    ".benchmarks",
    ".venv",
    "__pycache__",
    "build",
    "dist",
    "node_modules",
    "site",
    "venv",
}

# Written in pieces so that this file does not match itself.
_ARCH = "ARCHITECTURE"
_SEED = "seed"
_SHARED = "shared"
OUTSIDE_REFERENCE = re.compile(
    rf"{_ARCH}\.md|{_ARCH}\s*§|\b{_SEED}\s+0\d\d\b|\b{_SEED}s?/0\d\d|\.\./(?:{_SHARED}|{_SEED}s)/"
)


def _files() -> list[Path]:
    found: list[Path] = []
    stack = [ROOT]
    while stack:
        folder = stack.pop()
        for entry in folder.iterdir():
            if entry.is_dir():
                if entry.name not in SKIP_DIRS and not entry.name.endswith(".egg-info"):
                    stack.append(entry)
            elif entry.is_file():
                found.append(entry)
    return found


def test_no_file_refers_to_documents_outside_the_repository() -> None:
    hits: list[str] = []
    for path in _files():
        try:
            text = path.read_text(encoding="utf-8")
        except (UnicodeDecodeError, OSError):  # binary files (images, weights) hold no prose
            continue
        for number, line in enumerate(text.splitlines(), 1):
            if OUTSIDE_REFERENCE.search(line):
                hits.append(f"{path.relative_to(ROOT)}:{number}: {line.strip()[:120]}")
    assert not hits, "point at docs/ instead:\n" + "\n".join(hits)


def test_the_pattern_catches_what_it_is_for() -> None:
    for text in (
        f"see {_ARCH} §7",
        f"({_ARCH}.md §3, §5)",
        f"the loop of {_SEED} 000",
        f"({_SEED} 001's traces)",
        f"read ../{_SHARED}/design first",
    ):
        assert OUTSIDE_REFERENCE.search(text), text
    for text in ("--per-category 50 --seed 0", "seed=0", "the WHATWG standard, section 9.2"):
        assert not OUTSIDE_REFERENCE.search(text), text
