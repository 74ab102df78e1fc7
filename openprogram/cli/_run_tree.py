"""A durable run as a tree, for ``openprogram runs show``: JSON-ready, and as indented text.

``run_tree`` rebuilds the run tree from what a store holds of a run (the
record, the journal's steps, the decisions): each exec with its model turns,
each turn's reply with its calls, each call with its result (or why it has
none: it waits for a person, its ``side_effect`` body started and never
finished, or it was not reached) and the execs started inside it.
``tree_text`` writes that tree the way the live run tree looks.
"""

from __future__ import annotations

import json
import time
from typing import Any

from openprogram.cli._tree import summarize_arguments
from openprogram.durable import mark_attempt, parse_path, path_text, read_reply
from openprogram.messages import ToolCall
from openprogram.stores import RunRecord, Step, StoredRun

__all__ = ["record_summary", "run_tree", "tree_text"]

_SHOWN = 120
"""Characters of a text or result the tree shows."""


def record_summary(record: RunRecord, now: float | None = None) -> dict[str, Any]:
    """A run record as JSON: id, status, pending calls, times (and the error, if it failed)."""
    now = time.time() if now is None else now
    return {
        "run_id": record.run_id,
        "status": record.status,
        "pending": [
            {
                "call_id": p.call_id,
                "path": p.path,
                "tool_name": p.tool_name,
                "arguments": dict(p.arguments),
            }
            for p in (record.pending if record.status in ("paused", "running") else ())
        ],
        "created": record.created,
        "updated": record.updated,
        "age_s": round(now - record.created, 3),
        "error": record.error,
    }


def run_tree(stored: StoredRun) -> dict[str, Any]:
    """The run as a JSON-ready tree (see the module docstring)."""
    return _Builder(stored).tree()


class _Builder:
    def __init__(self, stored: StoredRun) -> None:
        self.stored = stored
        self.steps: dict[tuple[tuple[int, ...], str], Step] = {
            (parse_path(step.key), step.kind): step for step in stored.steps
        }
        self.execs = sorted({path[:-1] for path, kind in self.steps if kind == "reply"})
        record = stored.record
        waiting = record.status in ("paused", "running")
        self.pending = {p.path: p for p in record.pending} if waiting else {}
        self.decisions = {d.path: d for d in stored.decisions}

    def tree(self) -> dict[str, Any]:
        return {"run": record_summary(self.stored.record), "root": self.exec(())}

    def exec(self, path: tuple[int, ...]) -> dict[str, Any]:
        turns = []
        turn = 1
        while (step := self.steps.get(((*path, turn), "reply"))) is not None:
            reply, _ = read_reply(step)
            node: dict[str, Any] = {
                "turn": turn,
                "path": path_text((*path, turn)),
                "text": reply.text,
                "calls": [self.call((*path, turn, k), c) for k, c in enumerate(reply.tool_calls)],
            }
            pick = self.steps.get(((*path, turn, 0), "result")) if not reply.tool_calls else None
            if pick is not None:
                data = json.loads(pick.data)
                node["pick"] = {"option": data.get("pick"), "value": data.get("value")}
            turns.append(node)
            turn += 1
        return {"path": path_text(path), "turns": turns}

    def call(self, path: tuple[int, ...], call: ToolCall) -> dict[str, Any]:
        key = path_text(path)
        node: dict[str, Any] = {
            "path": key,
            "call_id": call.id,
            "tool_name": call.name,
            "arguments": dict(call.arguments),
        }
        result = self.steps.get((path, "result"))
        if result is not None:
            data = json.loads(result.data)
            node["status"] = "failed" if data.get("failure") else "done"
            node["result"] = data.get("content")
            node["failure"] = data.get("failure")
        elif key in self.pending:
            node["status"] = "waiting"
        elif mark_attempt(self.steps.get((path, "started"))) > mark_attempt(
            self.steps.get((path, "paused"))
        ):
            node["status"] = "started"  # a side_effect body began and never finished
        else:
            node["status"] = "not finished"
        decision = self.decisions.get(key)
        if decision is not None:
            node["decision"] = "approved" if decision.approved else f"denied: {decision.reason}"
        node["execs"] = [
            self.exec(e) for e in self.execs if len(e) == len(path) + 1 and e[:-1] == path
        ]
        return node


_MARKS = {
    "done": "✓",
    "failed": "✗",
    "waiting": "⏸ waits for a person",
    "started": "? started, never finished (side_effect: not run again)",
    "not finished": "… not finished",
}


def tree_text(tree: dict[str, Any]) -> str:
    """The tree as indented lines, like the live run tree."""
    run = tree["run"]
    head = f"run {run['run_id']}: {run['status']}"
    if run["pending"]:
        head += f", {len(run['pending'])} call(s) waiting"
    if run["error"]:
        head += f" ({_short(run['error'])})"
    lines = [head]
    _exec_lines(tree["root"], 0, lines)
    return "\n".join(lines) + "\n"


def _exec_lines(node: dict[str, Any], depth: int, lines: list[str]) -> None:
    pad = "  " * depth
    lines.append(f"{pad}▶ exec {node['path'] or '(root)'}")
    for turn in node["turns"]:
        calls = turn["calls"]
        said = f" {_short(turn['text'])!r}" if turn["text"] else ""
        lines.append(
            f"{pad}  · turn {turn['path']}:{said}" + (f" → {len(calls)} call(s)" if calls else "")
        )
        if "pick" in turn:
            pick = turn["pick"]
            lines.append(f"{pad}    ↳ picked {pick['option']}: {_short(json.dumps(pick['value']))}")
        for call in calls:
            mark = _MARKS.get(call["status"], call["status"])
            said = f" {_short(call['result'])}" if call.get("result") is not None else ""
            decided = f" [{call['decision']}]" if "decision" in call else ""
            arguments = summarize_arguments(call["arguments"])
            lines.append(
                f"{pad}    ⚙ {call['path']} {call['tool_name']}({arguments}) "
                f"(call {call['call_id']}){decided} {mark}{said}"
            )
            for inner in call["execs"]:
                _exec_lines(inner, depth + 3, lines)


def _short(text: str) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= _SHOWN else text[: _SHOWN - 1] + "…"
