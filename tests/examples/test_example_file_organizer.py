"""examples/file_organizer.py: moves need approval; without a hook every move is refused."""

from __future__ import annotations

from pathlib import Path

from _example_loader import load_example

from openprogram import Runtime, ToolResultMessage
from openprogram.testing import ScriptedProvider, call

organizer = load_example("file_organizer")


def make_dir(root: Path) -> Path:
    root.mkdir(exist_ok=True)
    (root / "cat.png").write_bytes(b"\x89PNG")
    (root / "notes.txt").write_text("hello", encoding="utf-8")
    return root


def script(*moves: tuple[str, str]) -> ScriptedProvider:
    return ScriptedProvider(
        [
            call("list_files"),
            [call("move_file", source=s, destination=d) for s, d in moves],
            "Sorted the files.",
        ]
    )


def results(provider: ScriptedProvider) -> list[ToolResultMessage]:
    """The tool results the model got back after the move batch."""
    return [m for m in provider.requests[2].messages[-2:] if isinstance(m, ToolResultMessage)]


def files(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file())


def test_the_model_sees_the_listing(tmp_path: Path) -> None:
    root = make_dir(tmp_path)
    provider = script(("cat.png", "images/cat.png"))
    Runtime(provider, deps={"root": root}).exec("list", tools=[organizer.list_files])
    listing = provider.requests[1].messages[-1]
    assert isinstance(listing, ToolResultMessage)
    assert "cat.png" in listing.content
    assert "notes.txt" in listing.content


def test_without_an_approval_hook_every_move_is_refused(tmp_path: Path) -> None:
    root = make_dir(tmp_path)
    provider = script(("cat.png", "images/cat.png"))
    answer = organizer.organize(runtime=Runtime(provider, deps={"root": root}))
    assert answer == "Sorted the files."
    assert files(root) == ["cat.png", "notes.txt"]  # nothing moved
    (refused,) = results(provider)
    assert refused.is_error
    assert "approval" in refused.content.lower()


def test_with_the_hook_moves_inside_the_directory_happen(tmp_path: Path) -> None:
    root = make_dir(tmp_path)
    provider = script(("cat.png", "images/cat.png"), ("notes.txt", "documents/notes.txt"))
    runtime = Runtime(provider, deps={"root": root}, approval=organizer.approve_moves_within(root))
    organizer.organize(runtime=runtime)
    assert files(root) == ["documents/notes.txt", "images/cat.png"]
    assert [r.content for r in results(provider)] == [
        "moved cat.png -> images/cat.png",
        "moved notes.txt -> documents/notes.txt",
    ]


def test_the_hook_refuses_moves_that_leave_the_directory(tmp_path: Path) -> None:
    root = make_dir(tmp_path / "box")
    provider = script(("cat.png", "../cat.png"), ("notes.txt", "/tmp/notes.txt"))
    runtime = Runtime(provider, deps={"root": root}, approval=organizer.approve_moves_within(root))
    organizer.organize(runtime=runtime)
    assert files(root) == ["cat.png", "notes.txt"]
    assert not (tmp_path / "cat.png").exists()
    for refused in results(provider):
        assert refused.is_error
        assert "refused" in refused.content


def test_a_path_escaping_after_approval_is_still_stopped(tmp_path: Path) -> None:
    root = make_dir(tmp_path / "box")
    provider = script(("cat.png", "images/../../cat.png"))
    allow_all = Runtime(provider, deps={"root": root}, approval=lambda call: None)
    organizer.organize(runtime=allow_all)
    (result,) = results(provider)
    assert result.is_error
    assert "outside the organised directory" in result.content
    assert files(root) == ["cat.png", "notes.txt"]


def test_moves_run_one_after_another() -> None:
    assert organizer.move_file.parallel_safe is False
    assert organizer.move_file.requires_approval is True
