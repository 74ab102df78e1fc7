"""The results table and the JSON dump."""

from __future__ import annotations

import platform
import sys
from datetime import UTC, datetime
from importlib import metadata
from typing import TYPE_CHECKING, Any

import drivers
from _common import venv_hint

if TYPE_CHECKING:  # _harness imports this module
    from _harness import BenchResult

REFERENCE = "openprogram"
DISTRIBUTIONS = (
    "openprogram",
    "pydantic-ai-slim",
    "openai-agents",
    "langchain-core",
    "langgraph",
    "langgraph-prebuilt",
    "pydantic",
)
"""Distributions whose versions go into the JSON dump."""


def _number(value: float) -> str:
    if abs(value) >= 100:
        return f"{value:,.0f}"
    if abs(value) >= 10:
        return f"{value:.1f}"
    return f"{value:.2f}"


def _cell(value: float | None, reference: float | None, framework: str) -> str:
    if value is None:
        return "—"
    if framework == REFERENCE:
        return _number(value)
    ratio = f"{value / reference:.2f}×" if reference else "—"
    return f"{_number(value)} ({ratio})"


def _rows(result: BenchResult) -> list[list[str]]:
    medians = result.medians()
    reference = medians.get(REFERENCE, {})
    rows = []
    for measure in result.bench.measures:
        row = [f"{result.bench.name}: {measure.label} [{measure.unit}]"]
        for framework in drivers.NAMES:
            value = medians.get(framework, {}).get(measure.key)
            row.append(_cell(value, reference.get(measure.key), framework))
        rows.append(row)
    return rows


def _problems(results: list[BenchResult]) -> list[str]:
    """One line per distinct failure, naming the benchmarks it hit."""
    hit: dict[tuple[str, str], list[str]] = {}
    for result in results:
        for framework, error in result.errors.items():
            hit.setdefault((framework, error), []).append(result.bench.name)
    lines = [hint] if (hint := venv_hint()) else []
    for (framework, error), benches in hit.items():
        prefix = "" if error.startswith(framework) else f"{drivers.LABELS[framework]}: "
        lines.append(f"{prefix}{error} [{', '.join(benches)}]")
    return lines


def format_report(results: list[BenchResult]) -> str:
    """Render medians as a table, peers' cells with their ratio to openprogram.

    Args:
        results: One result per benchmark, in display order.
    """
    header = ["measure", *(drivers.LABELS[name] for name in drivers.NAMES)]
    rows = [header] + [row for result in results for row in _rows(result)]
    widths = [max(len(row[i]) for row in rows) for i in range(len(header))]
    lines = ["  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)) for row in rows]
    lines.insert(1, "  ".join("-" * width for width in widths))
    lines.append("")
    lines.append(
        "Medians; (n×) = that framework's median / openprogram's (> 1: openprogram is lower)."
    )
    lines += _problems(results)
    return "\n".join(line.rstrip() for line in lines)


def _version(distribution: str) -> str | None:
    try:
        return metadata.version(distribution)
    except metadata.PackageNotFoundError:
        return None


def to_json(results: list[BenchResult], repeat: int) -> dict[str, Any]:
    """Everything measured, for ``bench/results/latest.json``.

    Args:
        results: One result per benchmark.
        repeat: Samples per framework that were asked for.
    """
    return {
        "meta": {
            "date": datetime.now(UTC).isoformat(timespec="seconds"),
            "python": sys.version.split()[0],
            "platform": platform.platform(),
            "repeat": repeat,
            "versions": {name: _version(name) for name in DISTRIBUTIONS},
        },
        "benches": {
            result.bench.name: {
                "measures": {
                    m.key: {"label": m.label, "unit": m.unit} for m in result.bench.measures
                },
                "medians": result.medians(),
                "samples": result.samples,
                "errors": result.errors,
            }
            for result in results
        },
    }
