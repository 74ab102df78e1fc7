"""examples/file_organizer.py: the program lists the files with their kinds, the model moves
them; moves need approval, and without a hook every move is refused."""

from __future__ import annotations

from pathlib import Path

import pytest
from _example_loader import load_example

from openprogram import Runtime, ToolResultMessage, UserMessage
from openprogram.testing import ScriptedProvider, call

organizer = load_example("file_organizer")


def make_dir(root: Path) -> Path:
    root.mkdir(exist_ok=True)
    (root / "cat.png").write_bytes(b"\x89PNG")
    (root / "notes.txt").write_text("hello", encoding="utf-8")
    return root


def script(*moves: tuple[str, str]) -> ScriptedProvider:
    return ScriptedProvider(
        [[call("move_file", source=s, folder=f) for s, f in moves], "Sorted the files."]
    )


def results(provider: ScriptedProvider) -> list[ToolResultMessage]:
    """The tool results the model got back after the move batch."""
    return [m for m in provider.requests[1].messages if isinstance(m, ToolResultMessage)]


def files(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file())


def test_the_model_gets_each_file_with_its_kind_and_only_the_move_tool(tmp_path: Path) -> None:
    root = make_dir(tmp_path)
    (root / "main.py").write_text("print()", encoding="utf-8")
    (root / "song.xyz").write_bytes(b"?")
    provider = script(("cat.png", "images"))
    organizer.organize(runtime=Runtime(provider, deps={"root": root}))
    first = provider.requests[0]
    (asked,) = first.messages
    assert isinstance(asked, UserMessage)
    for line in ("- cat.png (images)", "- main.py (code)", "- notes.txt (documents)"):
        assert line in str(asked.content)
    assert "- song.xyz (other)" in str(asked.content)
    assert [t["name"] for t in first.tools] == ["move_file"]


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
    provider = script(("cat.png", "images"))
    runtime = Runtime(provider, deps={"root": root}, approval=organizer.approve_moves_within(root))
    organizer.organize(runtime=runtime)
    (refused,) = results(provider)
    assert refused.is_error
    assert "already exists" in refused.content
    assert (root / "images" / "cat.png").read_bytes() == b"older"  # nothing lost
    assert (root / "cat.png").exists()


def test_without_an_approval_hook_every_move_is_refused(tmp_path: Path) -> None:
    root = make_dir(tmp_path)
    provider = script(("cat.png", "images"))
    answer = organizer.organize(runtime=Runtime(provider, deps={"root": root}))
    assert answer == "Sorted the files."
    assert files(root) == ["cat.png", "notes.txt"]  # nothing moved
    (refused,) = results(provider)
    assert refused.is_error
    assert "approval" in refused.content.lower()


def test_with_the_hook_moves_inside_the_directory_happen(tmp_path: Path) -> None:
    root = make_dir(tmp_path)
    provider = script(("cat.png", "images"), ("notes.txt", "documents"))
    runtime = Runtime(provider, deps={"root": root}, approval=organizer.approve_moves_within(root))
    organizer.organize(runtime=runtime)
    assert files(root) == ["documents/notes.txt", "images/cat.png"]
    assert [r.content for r in results(provider)] == [
        "moved cat.png -> images/cat.png",
        "moved notes.txt -> documents/notes.txt",
    ]


def test_the_hook_refuses_moves_that_leave_the_directory(tmp_path: Path) -> None:
    root = make_dir(tmp_path / "box")
    provider = script(("cat.png", ".."), ("notes.txt", "/tmp"))
    runtime = Runtime(provider, deps={"root": root}, approval=organizer.approve_moves_within(root))
    organizer.organize(runtime=runtime)
    assert files(root) == ["cat.png", "notes.txt"]
    assert not (tmp_path / "cat.png").exists()
    for refused in results(provider):
        assert refused.is_error
        assert "refused" in refused.content


def test_a_path_escaping_after_approval_is_still_stopped(tmp_path: Path) -> None:
    root = make_dir(tmp_path / "box")
    provider = script(("cat.png", "images/../.."))
    allow_all = Runtime(provider, deps={"root": root}, approval=lambda call: None)
    organizer.organize(runtime=allow_all)
    (result,) = results(provider)
    assert result.is_error
    assert "outside the organised directory" in result.content
    assert files(root) == ["cat.png", "notes.txt"]


def test_moves_run_one_after_another() -> None:
    assert organizer.move_file.parallel_safe is False
    assert organizer.move_file.requires_approval is True
