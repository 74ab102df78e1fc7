"""Seeded inputs for the examples: file sets, support tickets with their orders, trips.

Each generator takes a ``seed`` and gives the same input for it on every run
and machine (``random.Random(seed)``), drawn from pools larger than any one
input, so the examples are judged on inputs nobody tuned them on. Each input
also says what doing the job means for it (where each file belongs, which
step a ticket needs, what a plan must mention), so a check reads the result
without asking the example.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass, field
from pathlib import Path

__all__ = [
    "MONTHS",
    "FileSet",
    "Ticket",
    "Trip",
    "file_set",
    "ticket",
    "trip",
]

# -- file sets (examples/file_organizer.py) -----------------------------------------------

EXTENSIONS: dict[str, tuple[str, ...]] = {
    "images": (".png", ".jpg", ".jpeg", ".gif", ".svg", ".webp"),
    "documents": (".pdf", ".txt", ".md", ".docx", ".odt", ".rtf"),
    "code": (".py", ".js", ".ts", ".sh", ".go", ".rs", ".java"),
    "audio": (".mp3", ".wav", ".ogg", ".flac"),
    "data": (".csv", ".json", ".xlsx", ".yaml", ".xml"),
}
"""The folder each extension belongs in (the organizer's documented rule)."""

STEMS = (
    "report", "photo", "notes", "song", "invoice", "beach", "budget", "holiday", "resume",
    "podcast", "script", "diagram", "letter", "summary", "backup", "logo", "draft", "lecture",
    "recipe", "contract", "setup", "index", "main", "utils", "export", "scan", "memo", "track",
    "demo", "chart", "mixtape", "thesis", "build", "sketch", "receipts", "playlist", "config",
    "minutes", "portrait", "interview", "sales_2024", "Q3-results", "family dinner", "intro",
)  # fmt: skip
"""File names (without extension) to draw from: far more than one set uses."""

SUBFOLDERS = ("inbox", "downloads", "old", "trips")


@dataclass(frozen=True, slots=True)
class FileSet:
    """Files to create (relative paths) and the folder each belongs in."""

    seed: int
    """The seed it was drawn with."""
    files: tuple[str, ...]
    """Relative paths, some in a subfolder, some maybe already in the right folder."""
    expected: tuple[str, ...]
    """Where each file must end up: ``<folder>/<name>``, sorted."""

    def create(self, root: Path) -> None:
        """Write the files under ``root`` (a few bytes each)."""
        for relative in self.files:
            path = root / relative
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(b"x")

    def describe(self) -> str:
        """The files, as one line for a report."""
        return " ".join(self.files)


def file_set(seed: int, *, size: tuple[int, int] = (4, 8)) -> FileSet:
    """A set of ``size[0]`` to ``size[1]`` files with distinct names and known kinds."""
    rng = random.Random(f"files-{seed}")
    count = rng.randint(*size)
    stems = rng.sample(STEMS, count)
    kinds = sorted(EXTENSIONS)
    files, expected = [], []
    for stem in stems:
        kind = rng.choice(kinds)
        ext = rng.choice(EXTENSIONS[kind])
        name = f"{stem}{ext.upper() if rng.random() < 0.1 else ext}"
        where = rng.random()
        if where < 0.15:
            relative = f"{rng.choice(SUBFOLDERS)}/{name}"
        elif where < 0.22:
            relative = f"{kind}/{name}"  # already where it belongs
        else:
            relative = name
        files.append(relative)
        expected.append(f"{kind}/{name}")
    return FileSet(seed=seed, files=tuple(files), expected=tuple(sorted(expected)))


# -- support tickets (examples/ticket_router.py) ------------------------------------------

MONTHS = (
    "January", "February", "March", "April", "May", "June", "July", "August", "September",
    "October", "November", "December",
)  # fmt: skip

_CHARGED_TWICE = (
    "Order {id}: I was charged twice!",
    "Hi, my card was billed two times for order {id}. Please sort it out.",
    "I paid twice for {id}, I want my money back.",
    "You took the payment for order {id} twice from my account!",
    "Double charge on my order {id}, please refund the extra payment.",
    "Why do I see two charges for order {id} on my bank statement?",
)  # fmt: skip
_WHERE_IS_IT = (
    "Where is my order {id}?",
    "Order {id} hasn't arrived yet. When will it come?",
    "Can you tell me the status of my order {id}?",
    "Any news on {id}? I'm still waiting for it.",
    "Has my order {id} been shipped?",
    "When will order {id} be delivered?",
)  # fmt: skip
_OTHER_STATUSES = ("delivered on {date}", "being packed", "cancelled on {date}", "shipped")


@dataclass(frozen=True, slots=True)
class Ticket:
    """A customer's ticket, the order book behind it, and the step it needs."""

    seed: int
    """The seed it was drawn with."""
    text: str
    """The customer's message."""
    order_id: str
    """The order it is about."""
    orders: dict[str, str] = field(hash=False)
    """Order id -> status: this order and a few others."""
    route: str
    """The right step: ``"refund"`` (charged twice) or ``"reply"`` (where is it)."""

    def write_orders(self, path: Path) -> None:
        """Write the order book as JSON, the form ``ticket_router.py --orders`` reads."""
        path.write_text(json.dumps(self.orders, indent=2), encoding="utf-8")

    def describe(self) -> str:
        """The ticket and its order's status, as one line for a report."""
        return f"{self.text!r} ({self.order_id}: {self.orders[self.order_id]})"


def _order_id(rng: random.Random) -> str:
    return f"{rng.choice('ABCDEFGHJKLMNPRSTUVWXYZ')}-{rng.randint(1000, 9999)}"


def _date(rng: random.Random, month: int | None = None) -> str:
    return f"2026-{month or rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}"


def ticket(seed: int) -> Ticket:
    """A ticket about a double charge (to refund) or a parcel on its way (to answer)."""
    rng = random.Random(f"ticket-{seed}")
    order = _order_id(rng)
    if rng.random() < 0.5:
        text, route = rng.choice(_CHARGED_TWICE), "refund"
        status = f"paid twice on {_date(rng)}"
    else:
        text, route = rng.choice(_WHERE_IS_IT), "reply"
        month = rng.randint(1, 11)
        status = f"shipped on {_date(rng, month)}, arriving {_date(rng, month + 1)}"
    orders = {order: status}
    while len(orders) < 4:
        other = _order_id(rng)
        orders.setdefault(other, rng.choice(_OTHER_STATUSES).format(date=_date(rng)))
    book = dict(sorted(orders.items()))
    return Ticket(seed=seed, text=text.format(id=order), order_id=order, orders=book, route=route)


# -- trips (examples/trip_planner.py) -----------------------------------------------------

CITIES = (
    "Paris", "London", "Tokyo", "Rome", "Berlin", "Madrid", "Lisbon", "Vienna", "Prague",
    "Oslo", "Dublin", "Athens", "Cairo", "Sydney", "Toronto", "Seoul", "Istanbul",
    "Amsterdam", "Barcelona", "Kyoto", "Edinburgh", "Copenhagen", "Budapest", "Marrakesh",
    "Vancouver", "Buenos Aires", "Cape Town", "Reykjavik", "Hanoi", "Lima",
)  # fmt: skip


@dataclass(frozen=True, slots=True)
class Trip:
    """A destination and a month."""

    seed: int
    """The seed it was drawn with."""
    city: str
    """The destination."""
    month: str
    """The month of the trip."""

    def describe(self) -> str:
        """The trip, as one line for a report."""
        return f"{self.city} in {self.month}"


def trip(seed: int) -> Trip:
    """A city from ``CITIES`` and a month."""
    rng = random.Random(f"trip-{seed}")
    return Trip(seed=seed, city=rng.choice(CITIES), month=rng.choice(MONTHS))
