"""Garbage tool calls: how many were tried and what became of them.

Run alone: ``python bench/reliability/fuzz.py [--replies N]``.

Draws N model replies of broken tool calls with the strategies of
``tests/stress/_garbage.py`` (wrong types, missing and extra keys, 1 MB strings,
nesting up to 5,000 deep, NaN/Infinity, lone surrogates, dunder keys,
malformed-argument flags, duplicate and empty ids, case variants and Unicode
look-alikes of names) against menus drawn from a zoo of every tool form, runs
each through ``run_tools`` and checks every invariant of
``tests/stress/test_bad_input.py``. Prints how the calls were answered and
how many invariants broke (a failing reply is printed and ends the run).
"""

from __future__ import annotations

import argparse
import time
from collections import Counter

import _setup

_setup.prepare()

from hypothesis import HealthCheck, given, settings  # noqa: E402 - needs the paths above
from stress._garbage import scenarios  # noqa: E402
from stress._zoo import JOURNAL, ZOO  # noqa: E402
from stress.test_bad_input import check_answers  # noqa: E402

from openprogram import ToolCall  # noqa: E402
from openprogram.runtime import run_tools_sync  # noqa: E402


def _category(call: ToolCall, content: str, is_error: bool, menu: list[str]) -> str:
    if not is_error:
        return "ran"
    if call.name not in menu:
        return "refused: not in the menu"
    if "not a valid JSON object" in content:
        return "refused: malformed arguments"
    if content.startswith("Invalid arguments"):
        return "refused: invalid arguments"
    return "ran and failed (error result)"


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--replies", type=int, default=5000)
    args = parser.parse_args()
    tally: Counter[str] = Counter()
    replies = 0

    @settings(
        max_examples=args.replies,
        deadline=None,
        database=None,
        suppress_health_check=list(HealthCheck),
    )
    @given(scenario=scenarios())
    def fuzz(scenario: tuple[list[str], list[ToolCall]]) -> None:
        nonlocal replies
        menu, calls = scenario
        JOURNAL.clear()
        results = run_tools_sync(calls, [ZOO[name] for name in menu])
        check_answers(calls, results, menu)
        replies += 1
        for call, result in zip(calls, results, strict=True):
            tally[_category(call, result.content, result.is_error, menu)] += 1

    started = time.perf_counter()
    fuzz()
    seconds = time.perf_counter() - started
    calls = sum(tally.values())
    print(f"{replies} replies, {calls} tool calls in {seconds:.1f} s; invariant violations: 0")
    for category, count in tally.most_common():
        print(f"  {category:<32} {count:>7}  ({count / calls:.0%})")


if __name__ == "__main__":
    main()
