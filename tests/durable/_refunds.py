"""A 3-level refund program on a fake model, and a harness that SIGKILLs it and restarts it.

The program (``refund_runtime`` + ``CONTENT``): the root exec asks the model to
refund orders A and B; the model calls the agentic function ``handle_order``
for both at once; each body execs again, and its model calls ``lookup_order``
(idempotent) and ``issue_refund`` (``side_effect``) at once, then answers; the
root answers with both answers. The approval hook pauses the refund of order
B (a manager must approve it). The fake model is a function of the request
(deterministic, instant); its answers do not quote the refund's result, so
the output is the same whether a refund ran or its outcome became unknown
because a kill landed inside its body.

Every tool body and model call appends one line to a side file (``O_APPEND``,
written before the work, so a killed process's runs are counted): the
attempt number, what ran, its journal key, its idempotency key.

As a child process (``python -m tests.durable._refunds MODE PLACE RUN_ID LOG
ATTEMPT [CALL...]``): ``run`` runs the program with the run id; ``resume``
resumes it approving the calls given; ``deny`` resumes it denying them (the
reason: ``DENIED``). It prints ``READY`` before it starts,
then one JSON line: ``{"status": "finished", "output": ...}`` or
``{"status": "paused", "pending": [...]}``. ``PLACE`` names the store
(``open_store``): ``sqlite:PATH`` or ``dbos:URL``.

``kill_trial`` runs one seeded trial: children killed at random moments and
restarted until the run finishes, then checks the log against the journal.
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from openprogram import PAUSE, RunPaused, Runtime, ToolContext, agentic_function, function
from openprogram.messages import AssistantMessage, ToolCall, ToolResultMessage
from openprogram.providers.base import ProviderRequest
from openprogram.stores import RunStore, SQLiteStore
from openprogram.testing import FunctionProvider, call

ROOT = Path(__file__).resolve().parent.parent.parent
CONTENT = "Refund orders A and B."
DENIED = "a manager said no: the order was already refunded by bank transfer"
BODY_S = 0.003
"""How long each tool body works (so kills land inside bodies too)."""
ORDERS = ("A", "B")
REFUNDS = ("1.0/0/1.1", "1.1/0/1.1")
"""Where the two refunds are in the run tree."""
_LOG = {"path": "", "attempt": 0}


def _log(what: str, key: str, extra: str = "") -> None:
    if not _LOG["path"]:
        return
    line = f"{_LOG['attempt']}\t{what}\t{key}\t{extra}\n".encode()
    fd = os.open(str(_LOG["path"]), os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, line)
    finally:
        os.close(fd)


def _path_of(ctx: ToolContext) -> str:
    assert ctx.idempotency_key is not None  # a durable run always has one
    return ctx.idempotency_key.split(":", 1)[1]


@function(register_globally=False)
def lookup_order(order: str, ctx: ToolContext) -> str:
    """Look an order up.

    Args:
        order: The order's letter.
    """
    _log("lookup_order", _path_of(ctx), ctx.idempotency_key or "")
    time.sleep(BODY_S)
    return f"order {order}: 40 EUR, paid by card"


@function(effect="side_effect", register_globally=False)
def issue_refund(order: str, amount: int, ctx: ToolContext) -> str:
    """Refund an order (money leaves the company: never twice).

    Args:
        order: The order's letter.
        amount: Euros to refund.
    """
    _log("issue_refund", _path_of(ctx), ctx.idempotency_key or "")
    time.sleep(BODY_S)
    return f"refunded {amount} EUR for order {order}"


@agentic_function(register_globally=False)
def handle_order(order: str, runtime: Runtime) -> str:
    """Handle the refund of one order.

    Args:
        order: The order's letter.
    """
    return runtime.exec(f"Handle order {order}.", tools=[lookup_order, issue_refund])


def model(request: ProviderRequest) -> Any:
    """The fake model: a function of the request (logged with the turn's journal key)."""
    first = request.messages[0].text
    turn = 1 + sum(isinstance(m, AssistantMessage) for m in request.messages)
    results = [m for m in request.messages if isinstance(m, ToolResultMessage)]
    if first.startswith("Handle order"):
        order = first.split()[-1].rstrip(".")
        refunds = [r.content for r in results if r.tool_name == "issue_refund"]
        _log("model", f"1.{ORDERS.index(order)}/0/{turn}", refunds[0] if refunds else "")
        if not results:
            return [call("lookup_order", order=order), call("issue_refund", order=order, amount=40)]
        lookup = next(r.content for r in results if r.tool_name == "lookup_order")
        return f"Order {order} handled ({lookup})."
    _log("model", str(turn))
    if not results:
        return [call("handle_order", order=order) for order in ORDERS]
    return " ".join(r.content for r in results)


def approval(tool_call: ToolCall) -> Any:
    """A manager must approve the refund of order B."""
    if tool_call.name == "issue_refund" and tool_call.arguments.get("order") == "B":
        return PAUSE
    return None


def refund_runtime(store: Any) -> Runtime:
    """The program's runtime on ``store``."""
    return Runtime(FunctionProvider(model), store=store, approval=approval)


def open_store(place: str) -> Any:
    """The store a place names: ``sqlite:PATH``, or ``dbos:URL`` (a ``DBOSStore``)."""
    kind, _, where = place.partition(":")
    if kind == "sqlite":
        return SQLiteStore(where)
    if kind == "dbos":
        from openprogram.stores.dbos import DBOSStore

        return DBOSStore(where)
    raise ValueError(f"unknown store place {place!r}")


def uninterrupted_output(store: Any, run_id: str) -> str:
    """The output of the program run without kills (pause, then approve)."""
    runtime = refund_runtime(store)
    try:
        runtime.exec(CONTENT, tools=[handle_order], run_id=run_id)
    except RunPaused as paused:
        approved = [p.call_id for p in paused.pending]
        return str(runtime.resume(run_id, approve=approved, tools=[handle_order]))
    raise AssertionError("the program did not pause")


# -- the child process ---------------------------------------------------------------------


def main(argv: list[str]) -> int:
    mode, place, run_id, log, attempt, *approve = argv
    _LOG["path"], _LOG["attempt"] = log, int(attempt)
    store = open_store(place)
    runtime = refund_runtime(store)
    print("READY", flush=True)
    try:
        if mode == "run":
            output = runtime.exec(CONTENT, tools=[handle_order], run_id=run_id)
        elif mode == "deny":
            denied = dict.fromkeys(approve, DENIED)
            output = runtime.resume(run_id, deny=denied, tools=[handle_order])
        else:
            output = runtime.resume(run_id, approve=approve, tools=[handle_order])
    except RunPaused as paused:
        pending = [{"call_id": p.call_id, "path": p.path} for p in paused.pending]
        print(json.dumps({"status": "paused", "pending": pending}), flush=True)
        return 10
    finally:
        store.close()
    print(json.dumps({"status": "finished", "output": output}), flush=True)
    return 0


# -- the harness ---------------------------------------------------------------------------


@dataclass
class Trial:
    """What one seeded trial did and saw."""

    seed: int
    output: str = ""
    attempts: int = 0
    kills: int = 0
    reexecuted: list[str] = field(default_factory=list)
    """Steps run again although the journal held them when the attempt started."""
    side_effects: dict[str, int] = field(default_factory=dict)
    """Runs of each ``side_effect`` body, by call path."""
    idempotent_reruns: int = 0
    """Runs of idempotent bodies beyond the first, over all calls."""
    unknown: set[str] = field(default_factory=set)
    """Paths of ``side_effect`` calls a kill left with an unknown outcome (started, maybe run)."""
    wrong_keys: list[str] = field(default_factory=list)
    """Idempotency keys that were not ``run_id:path`` of their call."""


def committed(place: str, run_id: str) -> set[tuple[str, str]]:
    """The (key, kind) of every reply and result the store holds for the run."""
    store = open_store(place)
    try:
        stored = asyncio.run(store.load_run(run_id)) if isinstance(store, RunStore) else None
    finally:
        store.close()
    if stored is None:
        return set()
    return {(s.key, s.kind) for s in stored.steps if s.kind in ("reply", "result")}


def _child(
    mode: str, place: str, run_id: str, log: Path, *, attempt: int, approve: list[str]
) -> Any:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    argv = [sys.executable, "-m", "tests.durable._refunds", mode, place, run_id, str(log)]
    return subprocess.Popen(
        [*argv, str(attempt), *approve], env=env, stdout=subprocess.PIPE, text=True, cwd=ROOT
    )


def kill_trial(
    seed: int, place: str, log: Path, *, window_s: float = 0.06, kills: int = 2
) -> Trial:
    """One trial: kill at random moments (seeded), restart until the run finishes, check.

    Each attempt is killed (at most ``kills`` times a trial) with probability one half,
    after a delay drawn uniformly from ``[0, window_s]`` once the child is ready (the
    program takes about that long).
    """
    rng = random.Random(seed)
    run_id = f"trial-{seed}"
    trial = Trial(seed=seed)
    mode, approve = "run", []
    before: dict[int, set[tuple[str, str]]] = {}
    while True:
        trial.attempts += 1
        assert trial.attempts <= 30, f"seed {seed}: no end after 30 attempts"
        before[trial.attempts] = committed(place, run_id)
        child = _child(mode, place, run_id, log, attempt=trial.attempts, approve=approve)
        assert child.stdout is not None
        assert child.stdout.readline().strip() == "READY"
        if trial.kills < kills and rng.random() < 0.5:
            time.sleep(rng.uniform(0, window_s))
            if child.poll() is None:
                child.send_signal(signal.SIGKILL)
        out, _ = child.communicate(timeout=120)
        if child.returncode == -signal.SIGKILL:
            trial.kills += 1
            continue
        outcome = json.loads(out.strip().splitlines()[-1])
        if outcome["status"] == "paused":
            mode, approve = "resume", [p["call_id"] for p in outcome["pending"]]
            continue
        trial.output = outcome["output"]
        break
    _check_log(trial, log, run_id, before)
    trial.unknown = unknown_outcomes(place, run_id)
    return trial


def _check_log(
    trial: Trial, log: Path, run_id: str, before: dict[int, set[tuple[str, str]]]
) -> None:
    runs: dict[str, int] = {}
    for line in log.read_text().splitlines():
        attempt_text, what, key, extra = line.split("\t")
        kind = "reply" if what == "model" else "result"
        if (key, kind) in before[int(attempt_text)]:
            trial.reexecuted.append(f"attempt {attempt_text}: {what} at {key}")
        if what == "model":
            continue
        runs[key] = runs.get(key, 0) + 1
        if extra != f"{run_id}:{key}":
            trial.wrong_keys.append(f"{what} at {key}: {extra!r}")
        if what == "issue_refund":
            trial.side_effects[key] = trial.side_effects.get(key, 0) + 1
    trial.idempotent_reruns = sum(n - 1 for key, n in runs.items() if key not in trial.side_effects)


def unknown_outcomes(place: str, run_id: str) -> set[str]:
    """The paths of the run's calls whose outcome a kill made unknown."""
    store = open_store(place)
    try:
        stored = asyncio.run(store.load_run(run_id))
    finally:
        store.close()
    assert stored is not None
    return {
        s.key
        for s in stored.steps
        if s.kind == "result" and json.loads(s.data).get("failure") == "unknown_outcome"
    }


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
