"""BFCL v4 questions and possible answers: where they are, and a seeded sample.

bfcl-eval ships its data inside the package: ``bfcl_eval/data/BFCL_v4_<category>.json``
(one JSON object per line: ``id``, ``question`` — turns of messages —, ``function``)
and ``bfcl_eval/data/possible_answer/BFCL_v4_<category>.json`` (``id``,
``ground_truth``). ``irrelevance`` has no possible-answer file: any call is wrong.
"""

from __future__ import annotations

import importlib.util
import json
import random
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["CATEGORIES", "Question", "default_data_dir", "load_category", "sample"]

CATEGORIES = ("simple_python", "multiple", "parallel", "parallel_multiple", "irrelevance")
RELEVANCE_ONLY = frozenset({"irrelevance"})


@dataclass(frozen=True, slots=True)
class Question:
    """One BFCL entry with its ground truth (``None`` for irrelevance)."""

    id: str
    category: str
    messages: list[dict[str, Any]]
    functions: list[dict[str, Any]]
    ground_truth: list[dict[str, Any]] | None


def default_data_dir() -> Path:
    """``bfcl_eval/data`` of the installed bfcl-eval (found without importing it)."""
    spec = importlib.util.find_spec("bfcl_eval")
    if spec is None or spec.origin is None:
        raise SystemExit(
            "bfcl-eval is not installed in this interpreter: run `bash bench/bfcl/setup.sh` "
            "and use the python it prints, or pass --data-dir"
        )
    return Path(spec.origin).parent / "data"


def _read_jsonl(path: Path) -> list[dict[str, Any]]:
    with path.open(encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def load_category(data_dir: Path, category: str) -> list[Question]:
    """Every question of one category, in file order, with its possible answer."""
    entries = _read_jsonl(data_dir / f"BFCL_v4_{category}.json")
    answers: dict[str, Any] = {}
    if category not in RELEVANCE_ONLY:
        answer_file = data_dir / "possible_answer" / f"BFCL_v4_{category}.json"
        answers = {a["id"]: a["ground_truth"] for a in _read_jsonl(answer_file)}
    questions = []
    for entry in entries:
        turns = entry["question"]
        if len(turns) != 1:
            raise ValueError(f"{entry['id']}: {len(turns)} turns; only single-turn categories")
        truth = answers.get(entry["id"]) if category not in RELEVANCE_ONLY else None
        if category not in RELEVANCE_ONLY and truth is None:
            raise ValueError(f"{entry['id']}: no possible answer in {data_dir}/possible_answer")
        questions.append(Question(entry["id"], category, turns[0], entry["function"], truth))
    return questions


def sample(questions: list[Question], per_category: int, seed: int) -> list[Question]:
    """``per_category`` questions drawn with ``random.Random(seed)``, in file order."""
    if per_category >= len(questions):
        return list(questions)
    picked = sorted(random.Random(seed).sample(range(len(questions)), per_category))
    return [questions[i] for i in picked]
