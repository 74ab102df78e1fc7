"""Run an example's documented command on a generated input and judge what it did.

Used by the ``local_llm`` tests (``test_examples_local.py``) and, from the
command line, to report runs on other seeds than the tests use::

    python tests/examples/drive.py file_organizer 200 201 202 203 204

Each run is ``python examples/<name>.py ...`` in a subprocess, exactly as the
example's docstring says (no ``--model``: the default provider, the embedded
model when no other is configured). The verdict reads the effect — the files
on disk, the step the router printed, what the plan names — never wording
beyond the looked-up facts.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import generated  # noqa: E402 - the sibling module, importable once HERE is on the path

EXAMPLES = HERE.parent.parent / "examples"

__all__ = ["Outcome", "run_file_organizer", "run_ticket_router", "run_trip_planner"]


@dataclass(frozen=True, slots=True)
class Outcome:
    """One run of an example on one generated input."""

    input: str
    """The input, as one line."""
    ok: bool
    """Whether the job was done."""
    detail: str
    """What the run did (or why it failed)."""
    seconds: float
    """Wall time of the subprocess."""


def _run(args: list[str], timeout: float) -> tuple[subprocess.CompletedProcess[str], float]:
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, *args],
        cwd=EXAMPLES.parent,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    return done, time.monotonic() - started


def _printed(done: subprocess.CompletedProcess[str]) -> str:
    out = done.stdout.strip()
    if done.returncode != 0:
        tail = done.stderr.strip().splitlines()[-1:] or ["(no stderr)"]
        return f"exit {done.returncode}: {tail[0]}"
    return out


def run_file_organizer(seed: int, *, timeout: float = 600.0) -> Outcome:
    """``python examples/file_organizer.py DIR`` on ``generated.file_set(seed)``."""
    files = generated.file_set(seed)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        files.create(root)
        done, seconds = _run([str(EXAMPLES / "file_organizer.py"), str(root)], timeout)
        found = (p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file())
        after = tuple(sorted(found))
    wrong = sorted(set(after) - set(files.expected))
    ok = done.returncode == 0 and after == files.expected
    detail = "all moved" if ok else f"misplaced: {wrong}"
    return Outcome(files.describe(), ok, f"{detail}; printed {_printed(done)!r}", seconds)


def run_ticket_router(seed: int, *, timeout: float = 600.0) -> Outcome:
    """``python examples/ticket_router.py TICKET --orders FILE`` on ``generated.ticket(seed)``."""
    ticket = generated.ticket(seed)
    with tempfile.TemporaryDirectory() as tmp:
        book = Path(tmp) / "orders.json"
        ticket.write_orders(book)
        script = str(EXAMPLES / "ticket_router.py")
        done, seconds = _run([script, ticket.text, "--orders", str(book)], timeout)
    printed = _printed(done)
    if ticket.route == "refund":
        ok = printed.startswith(f"refund issued for {ticket.order_id}")
    else:
        status = ticket.orders[ticket.order_id]
        arriving = status.rsplit(" ", 1)[-1]
        ok = printed.startswith("replied:") and arriving in printed
    return Outcome(ticket.describe(), ok, f"wanted {ticket.route}; printed {printed!r}", seconds)


def run_trip_planner(seed: int, *, timeout: float = 600.0) -> Outcome:
    """``python examples/trip_planner.py CITY --month MONTH`` on ``generated.trip(seed)``."""
    trip = generated.trip(seed)
    script = str(EXAMPLES / "trip_planner.py")
    done, seconds = _run([script, trip.city, "--month", trip.month], timeout)
    printed = _printed(done)
    text = printed.lower()
    weather_named = any(word in text for word in trip_weather_words(trip))
    month = trip.month.lower()
    weekend_named = f"{month} 6-7" in text or f"{month} 20-21" in text
    other = [m for m in generated.MONTHS if m.lower() != month and f"{m.lower()} 6-7" in text]
    plan = printed.rsplit("\n\nWeather: ", 1)[0].strip()  # the model's part, before the facts
    wrote = len(plan) >= 40 and not plan.startswith("exit ")
    ok = done.returncode == 0 and weather_named and weekend_named and not other and wrote
    return Outcome(trip.describe(), ok, f"printed {printed!r}", seconds)


def trip_weather_words(trip: generated.Trip) -> tuple[str, ...]:
    """Words of the weather the planner's tool reports for ``trip.city`` (any one will do)."""
    planner = _load("trip_planner")
    report = str(planner.get_weather(trip.city))  # "<city>: <sky>, <temp> C"
    sky, temp = report.split(": ", 1)[1].rsplit(", ", 1)
    return (sky.lower(), temp.split(" ")[0])


def _load(name: str) -> object:
    from _example_loader import load_example

    return load_example(name)


RUNNERS = {
    "file_organizer": run_file_organizer,
    "ticket_router": run_ticket_router,
    "trip_planner": run_trip_planner,
}


def main(argv: list[str]) -> int:
    """Run one example on the seeds given; print one line per run and a tally."""
    name, seeds = argv[0], [int(s) for s in argv[1:]]
    runner = RUNNERS[name]
    good = 0
    for seed in seeds:
        outcome = runner(seed)
        good += outcome.ok
        mark = "OK " if outcome.ok else "BAD"
        print(f"{mark} seed {seed} ({outcome.seconds:.0f}s) {outcome.input}\n    {outcome.detail}")
        sys.stdout.flush()
    print(f"{name}: {good}/{len(seeds)}")
    return 0 if good == len(seeds) else 1


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
