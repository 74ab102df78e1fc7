"""The examples do their job on the default embedded model (``local_llm``).

Checked on what happened — which tools ran, with which arguments, what the
program returned — never on wording. The ticket router is run as its
docstring says, with no ``--model``: on the embedded model.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from _example_loader import load_example

from openprogram import Runtime
from openprogram.events import ToolCallStarted
from openprogram.messages import AssistantMessage
from openprogram.providers.local import LocalProvider, ensure_server, local_available

pytestmark = [
    pytest.mark.local_llm,
    pytest.mark.skipif(not local_available(), reason="needs pip install 'openprogram-ai[local]'"),
]

router = load_example("ticket_router")


@pytest.fixture(scope="module")
def local_server() -> str:
    return ensure_server()


def test_the_ticket_router_looks_the_order_up_and_refunds_it(local_server: str) -> None:
    runtime = Runtime(LocalProvider(timeout=300.0, extra_body={"max_tokens": 256}))
    result = router.route_ticket("Order A-1001: I was charged twice!", runtime=runtime)
    run = runtime.last_run
    assert run is not None
    looked_up = [
        str(c.arguments.get("order_id")).upper()
        for m in run.messages
        if isinstance(m, AssistantMessage)
        for c in m.tool_calls
        if c.name == "lookup_order"
    ]
    assert looked_up[:1] == ["A-1001"]
    assert isinstance(result, str)
    assert result.startswith("refund issued for A-1001"), result


planner = load_example("trip_planner")


def test_the_trip_planner_checks_the_weather_and_the_free_weekends(local_server: str) -> None:
    ran: list[str] = []

    def note(event: object) -> None:
        if isinstance(event, ToolCallStarted):
            ran.append(event.tool_name)

    local = LocalProvider(timeout=300.0, extra_body={"max_tokens": 512})
    runtime = Runtime(local, observers=[note])
    plan = planner.plan_trip("Paris", runtime=runtime).lower()
    assert "get_weather" in ran
    assert "free_weekends" in ran
    assert "sunny" in plan or "21" in plan  # the weather it looked up
    assert "6-7" in plan or "20-21" in plan  # a free weekend it looked up


organizer = load_example("file_organizer")


def test_the_file_organizer_moves_every_file_into_the_folder_of_its_kind(
    local_server: str, tmp_path: Path
) -> None:
    names = ["cat.png", "main.py", "notes.txt", "report.pdf", "song.mp3", "trips/rome.jpg"]
    for name in names:
        (tmp_path / name).parent.mkdir(exist_ok=True)
        (tmp_path / name).write_bytes(b"x")
    runtime = Runtime(
        LocalProvider(timeout=300.0, extra_body={"max_tokens": 512}),
        deps={"root": tmp_path},
        approval=organizer.approve_moves_within(tmp_path),
    )
    organizer.organize(runtime=runtime)
    moved = sorted(p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*") if p.is_file())
    assert moved == [
        "audio/song.mp3",
        "code/main.py",
        "documents/notes.txt",
        "documents/report.pdf",
        "images/cat.png",
        "images/rome.jpg",
    ]
