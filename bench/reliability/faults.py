"""Provider faults: thousands of random fault sequences on the loopback wire, every provider.

Run alone: ``python bench/reliability/faults.py [--runs N] [--deadline-runs N] [--seed S]``.

Each run scripts what a loopback server answers to successive attempts of one
model call (429, 500, 503, 529, 400, a stall past the read timeout, a stream
cut before or after content, an empty or garbage body, or a good reply; see
``tests/stress/_faults.py``) and drives one ``Runtime.exec`` through it with
``max_retries`` drawn from 0-4. Checked per run: the exec ends as the retry
rules say (the oracle), never makes more than ``max_retries + 1`` attempts,
reports the attempts the server saw, and ends within ``timeout_s``. A second
series uses only retryable faults, 10 retries and tight deadlines (0.2-0.5 s),
so that ``timeout_s`` is what ends the exec. Prints outcome counts, attempt
histograms and time distributions.
"""

from __future__ import annotations

import argparse
import random
import statistics
from collections import Counter

import _setup

_setup.prepare()

from providers._server import WireServer  # noqa: E402 - needs the paths above
from stress._faults import (  # noqa: E402
    FAULTS,
    KINDS,
    RETRYABLE,
    Outcome,
    expected,
    run_sequence,
    violations,
)


def _quantiles(values: list[float]) -> str:
    ordered = sorted(values)

    def q(p: float) -> float:
        return ordered[min(len(ordered) - 1, int(p * len(ordered)))]

    return (
        f"p50 {q(0.5) * 1000:.0f} ms, p95 {q(0.95) * 1000:.0f} ms, "
        f"p99 {q(0.99) * 1000:.0f} ms, max {ordered[-1] * 1000:.0f} ms"
    )


def _oracle_series(rng: random.Random, runs: int, wire: WireServer) -> list[str]:
    print(f"== {runs} random sequences, max_retries 0-4, timeout_s 10 ==")
    problems: list[str] = []
    outcomes: list[Outcome] = []
    for _ in range(runs):
        kind, retries = rng.choice(KINDS), rng.randint(0, 4)
        faults = [rng.choice(FAULTS) for _ in range(rng.randint(1, 6))] + ["ok"]
        outcome = run_sequence(kind, faults, max_retries=retries, timeout_s=10, wire=wire)
        outcomes.append(outcome)
        want = expected(faults, retries)
        found = violations(outcome, max_retries=retries, timeout_s=10, slack_s=1.0)
        if (outcome.result == "ok", outcome.attempts) != (want.ok, want.attempts):
            found.append(f"expected ok={want.ok} after {want.attempts} attempts")
        problems += [f"{kind} {faults} (max_retries={retries}): {p}" for p in found]
    _print_outcomes(outcomes)
    return problems


def _deadline_series(rng: random.Random, runs: int, wire: WireServer) -> list[str]:
    print(f"\n== {runs} sequences of retryable faults, max_retries 10, timeout_s 0.2-0.5 ==")
    problems: list[str] = []
    outcomes: list[Outcome] = []
    overshoot: list[float] = []
    for _ in range(runs):
        kind, timeout_s = rng.choice(KINDS), rng.choice([0.2, 0.35, 0.5])
        faults = [rng.choice(RETRYABLE) for _ in range(12)] + ["ok"]
        outcome = run_sequence(kind, faults, max_retries=10, timeout_s=timeout_s, wire=wire)
        outcomes.append(outcome)
        overshoot.append(outcome.elapsed_s - timeout_s)
        found = violations(outcome, max_retries=10, timeout_s=timeout_s, slack_s=0.25)
        problems += [f"{kind} {faults} (timeout_s={timeout_s}): {p}" for p in found]
    _print_outcomes(outcomes)
    ended = [o for o in overshoot if o > -0.05]  # those the deadline ended
    if ended:
        print(f"time past timeout_s when the deadline ended it: {_quantiles(ended)}")
    return problems


def _print_outcomes(outcomes: list[Outcome]) -> None:
    if not outcomes:
        return
    results = Counter(o.result for o in outcomes)
    print("outcomes: " + ", ".join(f"{k} {v}" for k, v in results.most_common()))
    attempts = Counter(o.attempts for o in outcomes)
    print("attempts: " + ", ".join(f"{k}: {attempts[k]}" for k in sorted(attempts)))
    print(f"time per exec: {_quantiles([o.elapsed_s for o in outcomes])}")
    for kind in KINDS:
        mine = [o for o in outcomes if o.kind == kind]
        if mine:
            ok = sum(o.result == "ok" for o in mine)
            mean = statistics.fmean(o.attempts for o in mine)
            print(f"  {kind:<17} runs {len(mine):>4}  ok {ok:>4}  mean attempts {mean:.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--runs", type=int, default=1000)
    parser.add_argument("--deadline-runs", type=int, default=150)
    parser.add_argument("--seed", type=int, default=8)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    with WireServer() as wire:
        problems = _oracle_series(rng, args.runs, wire)
        problems += _deadline_series(rng, args.deadline_runs, wire)
    print(f"\nviolations: {len(problems)}")
    for problem in problems[:20]:
        print("  " + problem)


if __name__ == "__main__":
    main()
