"""A file-organising agent: it may look freely, but every move needs approval.

``move_file`` is declared with ``requires_approval=True``; the runtime asks the
``approval`` hook before each move and refuses every move when no hook is
configured (fail closed). Runs against any provider::

    python examples/file_organizer.py --model openai:gpt-4o-mini /tmp/some-dir
"""

from __future__ import annotations

import argparse
import shutil
from collections.abc import Callable
from pathlib import Path

from openprogram import Registry, Runtime, ToolContext, agentic_function, function
from openprogram.messages import ToolCall

TOOLS = Registry()
"""This program's tools (toolset "files"), kept out of the shared default registry, e.g.
``python -m openprogram tools --registry examples.file_organizer:TOOLS --explain move_file``."""


def _root(ctx: ToolContext) -> Path:
    root = ctx.deps["root"] if ctx.deps else None
    if not isinstance(root, Path):
        raise ValueError("Runtime(deps={'root': Path(...)}) is required")
    return root


def _inside(root: Path, relative: str) -> Path:
    target = (root / relative).resolve()
    if root.resolve() not in (target, *target.parents):
        raise ValueError(f"{relative!r} is outside the organised directory")
    return target


@function(registry=TOOLS, toolset="files")
def list_files(ctx: ToolContext) -> list[str]:
    """List every file in the directory being organised, as relative paths."""
    root = _root(ctx)
    return sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file())


@function(registry=TOOLS, toolset="files", requires_approval=True, parallel_safe=False)
def move_file(source: str, destination: str, ctx: ToolContext) -> str:
    """Move a file to a new relative path, creating folders as needed.

    Args:
        source: Relative path of the file to move.
        destination: Relative path to move it to, e.g. "images/cat.png".
    """
    root = _root(ctx)
    src, dst = _inside(root, source), _inside(root, destination)
    dst.parent.mkdir(parents=True, exist_ok=True)
    shutil.move(src, dst)
    return f"moved {source} -> {destination}"


@agentic_function(registry=TOOLS)
def organize(runtime: Runtime) -> str:
    """Sort the files of the directory into folders by file type."""
    return str(
        runtime.exec(
            "List the files, then move each one into a folder named after its kind "
            "(images, documents, code, other). Finish with a one-line summary.",
            tools=[list_files, move_file],
        )
    )


def approve_moves_within(root: Path) -> Callable[[ToolCall], str | None]:
    """An approval hook that allows moves whose destination stays inside ``root``."""

    def approval(call: ToolCall) -> str | None:
        dest = str(call.arguments.get("destination", ""))
        if dest.startswith(("/", "..")) or "/../" in dest:
            return f"refused: {dest!r} leaves {root}"
        return None

    return approval


def main() -> None:
    """Organise a directory from the command line."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("directory", type=Path)
    parser.add_argument("--model", default=None)
    args = parser.parse_args()
    root = args.directory.resolve()
    runtime = Runtime(args.model, deps={"root": root}, approval=approve_moves_within(root))
    print(organize(runtime=runtime))


if __name__ == "__main__":
    main()
