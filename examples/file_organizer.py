"""A file-organising agent: the program surveys the folder, the model moves the files.

Each file's kind comes from its extension (or media type); the model gets the
list and makes the moves. ``move_file`` is declared with
``requires_approval=True``: the runtime asks the ``approval`` hook before each
move and refuses every move when no hook is configured (fail closed). Runs on
the embedded model by default, or on any provider::

    python examples/file_organizer.py /tmp/some-dir
    python examples/file_organizer.py --model openai:gpt-4o-mini /tmp/some-dir
"""

from __future__ import annotations

import argparse
import mimetypes
import shutil
from collections.abc import Callable
from pathlib import Path, PurePosixPath

from openprogram import Registry, Runtime, ToolContext, agentic_function, function
from openprogram.messages import ToolCall

TOOLS = Registry()
"""This program's tools (toolset "files"), kept out of the shared default registry, e.g.
``python -m openprogram tools --registry examples.file_organizer:TOOLS --explain move_file``."""

KINDS: dict[str, frozenset[str]] = {
    "images": frozenset({".png", ".jpg", ".jpeg", ".gif", ".svg", ".webp", ".bmp"}),
    "documents": frozenset({".pdf", ".txt", ".md", ".doc", ".docx", ".odt", ".rtf"}),
    "code": frozenset({".py", ".js", ".ts", ".sh", ".c", ".h", ".rs", ".go", ".java"}),
    "audio": frozenset({".mp3", ".wav", ".ogg", ".flac"}),
    "data": frozenset({".csv", ".json", ".xlsx", ".xml", ".yaml"}),
}
"""Folder name -> the extensions that belong in it; anything else goes to ``other``."""
_BY_MEDIA = {"image": "images", "audio": "audio", "text": "documents"}


def kind_of(path: str) -> str:
    """The folder a file belongs in: by extension, else by media type, else ``"other"``."""
    suffix = PurePosixPath(path).suffix.lower()
    for kind, suffixes in KINDS.items():
        if suffix in suffixes:
            return kind
    media = mimetypes.guess_type(path)[0] or ""
    return _BY_MEDIA.get(media.split("/", 1)[0], "other")


def _root(ctx: ToolContext) -> Path:
    return _deps_root(ctx.deps)


def _deps_root(deps: object) -> Path:
    root = deps.get("root") if isinstance(deps, dict) else None
    if not isinstance(root, Path):
        raise ValueError("Runtime(deps={'root': Path(...)}) is required")
    return root


def _inside(root: Path, relative: str) -> Path:
    target = (root / relative).resolve()
    if root.resolve() not in (target, *target.parents):
        raise ValueError(f"{relative!r} is outside the organised directory")
    return target


def survey(root: Path) -> list[tuple[str, str]]:
    """``(relative path, kind)`` of every file not yet in the folder of its kind."""
    found = []
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        relative = path.relative_to(root).as_posix()
        kind = kind_of(relative)
        if relative.split("/", 1)[0] != kind:
            found.append((relative, kind))
    return found


@function(registry=TOOLS, toolset="files", requires_approval=True, parallel_safe=False)
def move_file(source: str, folder: str, ctx: ToolContext) -> str:
    """Move a file into a folder of the directory, keeping its name (the folder is created).

    Args:
        source: Relative path of the file to move, e.g. "cat.png".
        folder: Relative path of the folder to move it into, e.g. "images".
    """
    root = _root(ctx)
    src = _inside(root, source)
    dst = _inside(root, f"{folder.rstrip('/')}/{src.name}")
    if dst.exists():
        raise ValueError(f"{folder}/{src.name} already exists: nothing was moved")
    dst.parent.mkdir(parents=True, exist_ok=True)
    shutil.move(src, dst)
    return f"moved {source} -> {dst.relative_to(root.resolve()).as_posix()}"


@agentic_function(registry=TOOLS)
def organize(runtime: Runtime) -> str:
    """Sort the files of the directory into folders by kind (images, documents, code, ...)."""
    files = survey(_deps_root(runtime.deps))
    if not files:
        return "Nothing to move: every file is already in the folder of its kind."
    listing = "\n".join(f"- {path} ({kind})" for path, kind in files)
    return runtime.exec(
        f"Move each of these files into the folder named after its kind:\n{listing}\n"
        "Then say in one short sentence what you moved.",
        tools=[move_file],
        tool_choice="required",  # the first reply makes the moves; the next one reports them
    )


def approve_moves_within(root: Path) -> Callable[[ToolCall], str | None]:
    """An approval hook that allows moves whose folder stays inside ``root``."""

    def approval(call: ToolCall) -> str | None:
        folder = str(call.arguments.get("folder", ""))
        if folder.startswith(("/", "..")) or "/../" in f"/{folder}/":
            return f"refused: {folder!r} leaves {root}"
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
