"""The BFCL results as a markdown table (accuracy and median latency per category and client)."""

from __future__ import annotations

import statistics
from collections import Counter
from collections.abc import Sequence
from typing import Any

__all__ = ["markdown", "summarize"]


def summarize(
    records: Sequence[dict[str, Any]], clients: Sequence[str], categories: Sequence[str]
) -> dict[str, Any]:
    """Per client and category: correct, total, median seconds; per client: errors."""
    cells: dict[str, dict[str, dict[str, Any]]] = {}
    errors: dict[str, int] = {}
    kinds: dict[str, dict[str, int]] = {}
    for client in clients:
        mine = [r for r in records if r["client"] == client]
        errors[client] = sum(1 for r in mine if r["error"])
        kinds[client] = dict(Counter(_kind(r["error"]) for r in mine if r["error"]))
        cells[client] = {}
        for category in categories:
            rows = [r for r in mine if r["category"] == category]
            if not rows:
                continue
            scored = [r for r in rows if r["valid"] is not None]
            cells[client][category] = {
                "correct": sum(1 for r in scored if r["valid"]),
                "scored": len(scored),
                "total": len(rows),
                "median_s": statistics.median(r["seconds"] for r in rows),
                "errors": sum(1 for r in rows if r["error"]),
            }
    return {
        "cells": cells,
        "errors": errors,
        "error_kinds": kinds,
        "agreement": _agreement(records, clients),
    }


def _kind(error: str) -> str:
    """``"LLMError"``, ``"HTTP 500"``, ``"ConnectError"``...: what comes before the colon."""
    return error.split(":", 1)[0].strip()


def _agreement(records: Sequence[dict[str, Any]], clients: Sequence[str]) -> dict[str, int]:
    """How many questions two clients answered (no error) with the same decoded calls."""
    by_client = {c: {r["id"]: r["answer"] for r in records if r["client"] == c} for c in clients}
    out: dict[str, int] = {}
    for i, a in enumerate(clients):
        for b in clients[i + 1 :]:
            shared = by_client[a].keys() & by_client[b].keys()
            same = sum(
                1
                for q in shared
                if by_client[a][q] is not None and by_client[a][q] == by_client[b][q]
            )
            out[f"{a}={b}"] = same
    return out


def _errors_cell(summary: dict[str, Any], client: str) -> str:
    kinds = summary["error_kinds"].get(client) or {}
    detail = ", ".join(f"{kind} ×{n}" for kind, n in sorted(kinds.items()))
    total = summary["errors"].get(client, 0)
    return f"{total} ({detail})" if detail else str(total)


def markdown(summary: dict[str, Any], clients: Sequence[str], categories: Sequence[str]) -> str:
    """One row per category, one column per client: ``correct/total (median s)``."""
    lines = [
        "| category | " + " | ".join(clients) + " |",
        "|---|" + "---|" * len(clients),
    ]
    cells = summary["cells"]
    for category in categories:
        row = []
        for client in clients:
            cell = cells.get(client, {}).get(category)
            if cell is None:
                row.append("–")
                continue
            score = f"{cell['correct']}/{cell['total']}" if cell["scored"] else "unscored"
            row.append(f"{score} ({cell['median_s']:.2f} s)")
        lines.append(f"| {category} | " + " | ".join(row) + " |")
    errors = " | ".join(_errors_cell(summary, c) for c in clients)
    lines.append(f"| errors (LLMError, HTTP, exceptions) | {errors} |")
    agreement = ", ".join(f"{k}: {v}" for k, v in summary["agreement"].items())
    if agreement:
        lines.append("")
        lines.append(f"Same decoded answer on: {agreement}.")
    return "\n".join(lines)
