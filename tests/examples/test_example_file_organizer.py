"""examples/file_organizer.py: the program works out each file's folder and asks the model to
move the files one at a time, checking each move on disk; moves need approval, and without a
hook every move is refused."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from _example_loader import load_example

from openprogram import Runtime, UserMessage
from openprogram.providers.base import ProviderRequest
from openprogram.testing import FunctionProvider, ScriptedProvider, call

organizer = load_example("file_organizer")


def make_dir(root: Path) -> Path:
    root.mkdir(exist_ok=True)
    (root / "cat.png").write_bytes(b"\x89PNG")
    (root / "notes.txt").write_text("hello", encoding="utf-8")
    return root


def asked(request: ProviderRequest) -> tuple[str, str]:
    """The file and folder one move request names."""
    (message,) = request.messages
    assert isinstance(message, UserMessage)
    found = re.fullmatch(r"Move the file '(.+)' into the folder '(.+)'\.", str(message.content))
    assert found is not None, message.content
    return found.group(1), found.group(2)


def obedient(folder_for: dict[str, str] | None = None) -> FunctionProvider:
    """A model that moves the file each request names, into the folder it names (or
    ``folder_for[file]``)."""

    def reply(request: ProviderRequest) -> object:
        source, folder = asked(request)
        return call("move_file", source=source, folder=(folder_for or {}).get(source, folder))

    return FunctionProvider(reply)


def files(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file())


def test_each_file_is_one_request_naming_its_folder_with_only_the_move_tool(
    tmp_path: Path,
) -> None:
    root = make_dir(tmp_path)
    (root / "main.py").write_text("print()", encoding="utf-8")
    (root / "song.xyz").write_bytes(b"?")
    provider = obedient()
    runtime = Runtime(provider, deps={"root": root}, approval=organizer.approve_moves_within(root))
    answer = organizer.organize(runtime=runtime)
    assert [asked(r) for r in provider.requests] == [
        ("cat.png", "images"),
        ("main.py", "code"),
        ("notes.txt", "documents"),
        ("song.xyz", "other"),
    ]
    for request in provider.requests:
        assert [t["name"] for t in request.tools] == ["move_file"]
        assert request.tool_choice == "required"
    assert answer == "Every file is in the folder of its kind."
    moved = ["code/main.py", "documents/notes.txt", "images/cat.png", "other/song.xyz"]
    assert files(root) == moved


def test_a_file_the_model_misplaces_is_asked_for_once_more_then_reported(tmp_path: Path) -> None:
    root = make_dir(tmp_path)
    provider = obedient({"cat.png": "cat.png"})  # the arguments' values swapped round
    runtime = Runtime(provider, deps={"root": root}, approval=organizer.approve_moves_within(root))
    answer = organizer.organize(runtime=runtime)
    assert [asked(r) for r in provider.requests] == [
        ("cat.png", "images"),
        ("notes.txt", "documents"),
        ("cat.png", "images"),
    ]
    assert answer.startswith("Not moved: cat.png (to images): Tool 'move_file' failed")
    assert files(root) == ["cat.png", "documents/notes.txt"]


def test_a_file_moved_on_the_second_request_counts(tmp_path: Path) -> None:
    root = make_dir(tmp_path)
    (root / "notes.txt").unlink()
    moves = ["I will move it.", call("move_file", source="cat.png", folder="images")]
    provider = ScriptedProvider(moves)
    runtime = Runtime(provider, deps={"root": root}, approval=organizer.approve_moves_within(root))
    assert organizer.organize(runtime=runtime) == "Every file is in the folder of its kind."
    assert files(root) == ["images/cat.png"]


@pytest.mark.parametrize(
    ("path", "kind"),
    [
        ("a/B.PNG", "images"),
        ("x.md", "documents"),
        ("run.sh", "code"),
        ("t.csv", "data"),
        ("s.flac", "audio"),
        ("page.html", "documents"),  # no extension rule: its media type, text/html
        ("blob", "other"),
    ],
)
def test_kind_of(path: str, kind: str) -> None:
    assert organizer.kind_of(path) == kind


def test_files_already_in_place_are_left_out_and_a_sorted_folder_asks_nothing(
    tmp_path: Path,
) -> None:
    root = tmp_path
    (root / "images").mkdir()
    (root / "images" / "cat.png").write_bytes(b"\x89PNG")
    (root / "images" / "notes.txt").write_text("misplaced", encoding="utf-8")
    assert organizer.survey(root) == [("images/notes.txt", "documents")]
    (root / "images" / "notes.txt").unlink()
    provider = ScriptedProvider([])
    answer = organizer.organize(runtime=Runtime(provider, deps={"root": root}))
    assert answer.startswith("Nothing to move")
    assert provider.requests == []


def test_a_move_onto_an_existing_file_is_refused(tmp_path: Path) -> None:
    root = make_dir(tmp_path)
    (root / "images").mkdir()
    (root / "images" / "cat.png").write_bytes(b"older")
    hook = organizer.approve_moves_within(root)
    answer = organizer.organize(runtime=Runtime(obedient(), deps={"root": root}, approval=hook))
    assert answer.startswith("Not moved: cat.png (to images): ")
    assert "images/cat.png already exists: nothing was moved" in answer
    assert (root / "images" / "cat.png").read_bytes() == b"older"  # nothing lost
    assert (root / "cat.png").exists()


def test_without_an_approval_hook_every_move_is_refused(tmp_path: Path) -> None:
    root = make_dir(tmp_path)
    answer = organizer.organize(runtime=Runtime(obedient(), deps={"root": root}))
    assert files(root) == ["cat.png", "notes.txt"]  # nothing moved
    assert answer.startswith("Not moved: cat.png (to images): ")
    assert answer.count("no approval hook is configured") == 2  # each file's move was denied


def test_with_the_hook_moves_inside_the_directory_happen(tmp_path: Path) -> None:
    root = make_dir(tmp_path)
    provider = obedient()
    runtime = Runtime(provider, deps={"root": root}, approval=organizer.approve_moves_within(root))
    assert organizer.organize(runtime=runtime) == "Every file is in the folder of its kind."
    assert files(root) == ["documents/notes.txt", "images/cat.png"]
    assert len(provider.requests) == 2  # one per file: nothing left for a second round


def test_the_hook_refuses_moves_that_leave_the_directory(tmp_path: Path) -> None:
    root = make_dir(tmp_path / "box")
    provider = obedient({"cat.png": "..", "notes.txt": "/tmp"})
    runtime = Runtime(provider, deps={"root": root}, approval=organizer.approve_moves_within(root))
    answer = organizer.organize(runtime=runtime)
    assert files(root) == ["cat.png", "notes.txt"]
    assert not (tmp_path / "cat.png").exists()
    assert "cat.png (to images): " in answer
    assert answer.count("refused") == 2


def test_a_path_escaping_after_approval_is_still_stopped(tmp_path: Path) -> None:
    root = make_dir(tmp_path / "box")
    allow_all = Runtime(
        obedient({"cat.png": "images/../.."}), deps={"root": root}, approval=lambda call: None
    )
    answer = organizer.organize(runtime=allow_all)
    assert "outside the organised directory" in answer
    assert files(root) == ["cat.png", "documents/notes.txt"]


def test_moves_run_one_after_another() -> None:
    assert organizer.move_file.parallel_safe is False
    assert organizer.move_file.requires_approval is True
