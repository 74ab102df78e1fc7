"""A file-organising agent: the program decides where each file goes, the model moves it.

The program surveys the folder and works out each file's folder from its
extension (or media type). It then asks the model, one file at a time, to
move it there with ``move_file``, and checks the result on disk: a file still
out of place is asked for once more. Given the whole list in one request, the
default embedded 0.5B model stopped after a few moves or swapped
``move_file``'s arguments on 3 of 5 generated folders; one file per request it
moves each one. ``move_file`` is declared with ``requires_approval=True``: the
runtime asks the ``approval`` hook before each move and refuses every move when
no hook is configured (fail closed). Runs on the embedded model by default, or
on any provider::

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
from openprogram.messages import ToolCall, ToolResultMessage

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


ROUNDS = 2
"""How many times each file out of place is asked for: once, and once more if it stayed."""


@agentic_function(registry=TOOLS)
def organize(runtime: Runtime) -> str:
    """Sort the files of the directory into folders by kind (images, documents, code, ...)."""
    root = _deps_root(runtime.deps)
    if not survey(root):
        return "Nothing to move: every file is already in the folder of its kind."
    why: dict[str, str] = {}  # the last word on each file asked for: its move's result
    for _ in range(ROUNDS):
        for path, kind in survey(root):
            runtime.exec(
                f"Move the file {path!r} into the folder {kind!r}.",
                tools=[move_file],
                tool_choice="required",  # this request's job is the one move
                max_iterations=1,  # the program checks the move on disk: no closing reply
                on_max_iterations="return",
            )
            why[path] = _outcome(runtime)
    left = survey(root)
    if left:
        return "Not moved: " + "; ".join(f"{p} (to {k}): {why.get(p, '')}" for p, k in left)
    return "Every file is in the folder of its kind."


def _outcome(runtime: Runtime) -> str:
    """What the last move request did: its tool results, in order."""
    run = runtime.last_run
    done = [m.content for m in run.messages if isinstance(m, ToolResultMessage)] if run else []
    return "; ".join(done) or "the model made no move"


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
