"""Ten hand-written questions in BFCL's v4 file format (two per category), and a script
for the fake server that answers the first of each pair right and the second wrong."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

_SQUARE = {
    "name": "arith.square",
    "description": "Square a whole number.",
    "parameters": {
        "type": "dict",
        "properties": {"number": {"type": "integer", "description": "The number to square."}},
        "required": ["number"],
    },
}
_CONVERT = {
    "name": "convert_distance",
    "description": "Convert a distance between units.",
    "parameters": {
        "type": "dict",
        "properties": {
            "value": {"type": "float", "description": "How far."},
            "to_unit": {"type": "string", "enum": ["miles", "km"], "description": "Target unit."},
            "precision": {"type": "any", "description": "Optional rounding."},
        },
        "required": ["value", "to_unit"],
    },
}
_TIDE = {
    "name": "tide_times",
    "description": "High and low tide times for a harbour.",
    "parameters": {
        "type": "dict",
        "properties": {
            "harbour": {"type": "string", "description": "Harbour name."},
            "days": {
                "type": "array",
                "items": {"type": "integer"},
                "description": "Day offsets from today.",
            },
        },
        "required": ["harbour"],
    },
}
_LAMP = {
    "name": "lamp.switch",
    "description": "Turn a lamp on or off.",
    "parameters": {
        "type": "dict",
        "properties": {
            "room": {"type": "string", "description": "Which room."},
            "on": {"type": "boolean", "description": "True to switch on."},
            "colour": {"type": "tuple", "items": {"type": "integer"}, "description": "RGB triple."},
        },
        "required": ["room", "on"],
    },
}

# (id, category, question, functions, ground truth, fake reply)
QUESTIONS: list[tuple[str, str, str, list[Any], Any, dict[str, Any]]] = [
    (
        "simple_python_0",
        "simple_python",
        "Square the number eleven.",
        [_SQUARE],
        [{"arith.square": {"number": [11]}}],
        {"calls": [["arith_square", {"number": 11}]]},
    ),
    (
        "simple_python_1",
        "simple_python",
        "How far is 26.2 km in miles?",
        [_CONVERT],
        [{"convert_distance": {"value": [26.2], "to_unit": ["miles"], "precision": [""]}}],
        {"calls": [["convert_distance", {"value": 26.2, "to_unit": "km"}]]},
    ),
    (
        "multiple_0",
        "multiple",
        "When is high tide in Brixham?",
        [_SQUARE, _TIDE],
        [{"tide_times": {"harbour": ["Brixham"], "days": [""]}}],
        {"calls": [["tide_times", {"harbour": "Brixham"}]]},
    ),
    (
        "multiple_1",
        "multiple",
        "Switch the kitchen lamp on.",
        [_TIDE, _LAMP],
        [{"lamp.switch": {"room": ["kitchen"], "on": [True], "colour": [""]}}],
        {"calls": [["tide_times", {"harbour": "kitchen"}]]},
    ),
    (
        "parallel_0",
        "parallel",
        "Square 3 and square 4.",
        [_SQUARE],
        [{"arith.square": {"number": [3]}}, {"arith.square": {"number": [4]}}],
        {"calls": [["arith_square", {"number": 4}], ["arith_square", {"number": 3}]]},
    ),
    (
        "parallel_1",
        "parallel",
        "Tide times for Looe and for Fowey.",
        [_TIDE],
        [
            {"tide_times": {"harbour": ["Looe"], "days": [""]}},
            {"tide_times": {"harbour": ["Fowey"], "days": [""]}},
        ],
        {"calls": [["tide_times", {"harbour": "Looe"}]]},
    ),
    (
        "parallel_multiple_0",
        "parallel_multiple",
        "Square 9 and turn the hall lamp off.",
        [_SQUARE, _LAMP],
        [
            {"arith.square": {"number": [9]}},
            {"lamp.switch": {"room": ["hall"], "on": [False], "colour": [""]}},
        ],
        {
            "calls": [
                ["arith_square", {"number": 9}],
                ["lamp_switch", {"room": "hall", "on": False}],
            ]
        },
    ),
    (
        "parallel_multiple_1",
        "parallel_multiple",
        "Tides at Dartmouth, and 5 km in miles.",
        [_TIDE, _CONVERT],
        [
            {"tide_times": {"harbour": ["Dartmouth"], "days": [""]}},
            {"convert_distance": {"value": [5.0], "to_unit": ["miles"], "precision": [""]}},
        ],
        {"status": 500, "error": "scripted server failure"},
    ),
    (
        "irrelevance_0",
        "irrelevance",
        "Who painted the ceiling of the Sistine Chapel?",
        [_TIDE],
        None,
        {"text": "Michelangelo."},
    ),
    (
        "irrelevance_1",
        "irrelevance",
        "Write a haiku about autumn.",
        [_SQUARE],
        None,
        {"calls": [["arith_square", {"number": 5}]]},
    ),
]


def write_data(folder: Path) -> Path:
    """The questions as ``BFCL_v4_<category>.json`` files (and possible answers) in ``folder``."""
    (folder / "possible_answer").mkdir(parents=True, exist_ok=True)
    for qid, category, text, functions, truth, _reply in QUESTIONS:
        entry = {
            "id": qid,
            "question": [[{"role": "user", "content": text}]],
            "function": functions,
        }
        with (folder / f"BFCL_v4_{category}.json").open("a", encoding="utf-8") as f:
            f.write(json.dumps(entry) + "\n")
        if truth is not None:
            answer = {"id": qid, "ground_truth": truth}
            path = folder / "possible_answer" / f"BFCL_v4_{category}.json"
            with path.open("a", encoding="utf-8") as f:
                f.write(json.dumps(answer) + "\n")
    return folder


def script() -> dict[str, dict[str, Any]]:
    """The fake server's replies, keyed by question text."""
    return {text: reply for _id, _cat, text, _fns, _truth, reply in QUESTIONS}
