"""Do two checkouts give the embedded model the same BFCL answers? Run each, then diff.

``run`` asks BFCL's questions through the ``openprogram`` client of
``bench/bfcl`` (the checkout this file is in), one JSON line per answer,
written as soon as it is scored, so a run stopped early keeps what it did and
a run started again goes on where it stopped. The questions are the seeded
sample of ``bench/bfcl/run.py`` (``--per-category``, ``--seed``), asked in
rounds of ``--round`` per category (the first 5 of each, the next 5 of each,
...): a run stopped early covers every category alike. ``diff`` compares two
such files (or ``run.py``'s JSON) on the questions both answered: the calls
each gave and BFCL's verdict.

Usage (with the BFCL venv's python, see ``bench/README.md``)::

    OPENPROGRAM_LOCAL_THREADS=1 $PY bench/local-model/bfcl_same.py run before.jsonl
    OPENPROGRAM_LOCAL_THREADS=1 $PY /other/checkout/bench/local-model/bfcl_same.py run after.jsonl
    python3 bench/local-model/bfcl_same.py diff before.jsonl after.jsonl
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

_REPO = Path(__file__).resolve().parents[2]


def _run(args: argparse.Namespace) -> int:
    sys.path[:0] = [str(_REPO / "bench" / "bfcl"), str(_REPO)]
    import bfcl_data
    import run

    sample = ["--per-category", str(args.per_category), "--seed", str(args.seed)]
    options = run._parse([*sample, "--clients", "openprogram", "--model", args.model])
    scorer = run._bfcl_scorer()
    data = bfcl_data.default_data_dir()
    sampled = {
        c: bfcl_data.sample(bfcl_data.load_category(data, c), args.per_category, args.seed)
        for c in options.categories
    }
    step = args.round
    rounds = range(0, args.per_category, step)
    order = [q for k in rounds for c in options.categories for q in sampled[c][k : k + step]]
    done = {r["id"] for r in _records(args.out)} if args.out.exists() else set()
    with run._client("openprogram", options) as client, args.out.open("a") as sink:
        for i, question in enumerate(order, 1):
            if question.id in done:
                continue
            record = run._record(question, "openprogram", client.ask(question), scorer)
            sink.write(json.dumps(record) + "\n")
            sink.flush()
            mark = {True: "ok", False: "wrong", None: "-"}[record["valid"]]
            print(f"[{i}/{len(order)}] {question.id}: {mark} {record['seconds']:.1f}s", flush=True)
    return 0


def _records(path: Path) -> list[dict[str, Any]]:
    """The answers in a ``run`` file (JSON lines) or a ``run.py`` result (one JSON object)."""
    text = path.read_text(encoding="utf-8")
    if text.lstrip().startswith("{") and '"records"' in text[:4000]:
        return [r for r in json.loads(text)["records"] if r["client"] == "openprogram"]
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def _diff(args: argparse.Namespace) -> int:
    before = {r["id"]: r for r in _records(args.before)}
    after = {r["id"]: r for r in _records(args.after)}
    both = [i for i in before if i in after]
    changed = [i for i in both if before[i]["answer"] != after[i]["answer"]]
    errors = [i for i in both if (before[i]["error"] is None) != (after[i]["error"] is None)]
    verdicts = [i for i in both if before[i]["valid"] != after[i]["valid"]]
    print(f"{len(both)} questions answered in both; answers changed: {len(changed)}")
    print(f"errors changed: {len(errors)}; verdicts changed: {len(verdicts)}")
    for kind in sorted({before[i]["category"] for i in both}):
        ids = [i for i in both if before[i]["category"] == kind]
        right = [sum(bool(run[i]["valid"]) for i in ids) for run in (before, after)]
        print(f"  {kind}: {len(ids)} questions, correct {right[0]} -> {right[1]}")
    for i in changed:
        print(f"- {i}\n  before: {json.dumps(before[i]['answer'])}")
        print(f"  after:  {json.dumps(after[i]['answer'])}")
    return 1 if changed or errors else 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    ask = sub.add_parser("run", help="answer the sample, one JSON line per question")
    ask.add_argument("out", type=Path)
    ask.add_argument("--per-category", type=int, default=50)
    ask.add_argument("--seed", type=int, default=0)
    ask.add_argument("--round", type=int, default=5, help="questions per category per round")
    ask.add_argument("--model", default="qwen2.5-coder-0.5b")
    compare = sub.add_parser("diff", help="compare two runs on the questions both answered")
    compare.add_argument("before", type=Path)
    compare.add_argument("after", type=Path)
    args = parser.parse_args(argv)
    return _run(args) if args.command == "run" else _diff(args)


if __name__ == "__main__":
    sys.exit(main())
