"""``openprogram runs`` and ``openprogram resume``: a paused run listed, shown, resumed."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
ENV = {**os.environ, "PYTHONPATH": str(ROOT)}
MODEL = ["--module", "_cli_refunds", "--model", "_cli_refunds:refund_model"]


def command(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "openprogram", *args],
        env=ENV,
        cwd=HERE,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def paused_run(store: Path, run_id: str) -> dict[str, Any]:
    """Run the refund program until it pauses (in a process of its own); its waiting call."""
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "tests.durable._refunds",
            "run",
            f"sqlite:{store}",
            run_id,
            str(store.parent / "log"),
            "1",
        ],
        env=ENV,
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 10, done.stderr[-2000:]
    (pending,) = json.loads(done.stdout.splitlines()[-1])["pending"]
    return dict(pending)


def test_runs_lists_a_paused_run_and_shows_its_tree(tmp_path: Path) -> None:
    store = tmp_path / "runs.sqlite"
    waiting = paused_run(store, "refund-1")
    listed = command("runs", "--store", str(store), "--json")
    assert listed.returncode == 0, listed.stderr
    (run,) = json.loads(listed.stdout)["runs"]
    assert (run["run_id"], run["status"]) == ("refund-1", "paused")
    assert [p["call_id"] for p in run["pending"]] == [waiting["call_id"]]
    table = command("runs", "--store", str(store))
    assert "refund-1" in table.stdout
    assert "issue_refund (call " in table.stdout
    shown = command("runs", "show", "refund-1", "--store", str(store))
    assert shown.returncode == 0, shown.stderr
    assert "⚙ 1.1/0/1.1 issue_refund(order='B', amount=40)" in shown.stdout
    assert "⏸ waits for a person" in shown.stdout
    tree = json.loads(command("runs", "show", "refund-1", "--store", str(store), "--json").stdout)
    (turn,) = tree["root"]["turns"]
    assert [c["status"] for c in turn["calls"]] == ["done", "not finished"]


def test_resume_approves_and_finishes_a_run(tmp_path: Path) -> None:
    store = tmp_path / "runs.sqlite"
    waiting = paused_run(store, "refund-2")
    done = command(
        "resume",
        "refund-2",
        "--store",
        str(store),
        "--approve",
        waiting["call_id"],
        *MODEL,
        "--json",
    )
    assert done.returncode == 0, done.stderr
    outcome = json.loads(done.stdout)
    assert outcome["status"] == "finished"
    assert outcome["output"].startswith("Order A handled")
    listed = json.loads(command("runs", "--store", str(store), "--json").stdout)
    assert listed["runs"][0]["status"] == "finished"


def test_resume_denies_with_a_reason_the_model_reads(tmp_path: Path) -> None:
    store = tmp_path / "runs.sqlite"
    waiting = paused_run(store, "refund-3")
    done = command(
        "resume",
        "refund-3",
        "--store",
        str(store),
        "--deny",
        f"{waiting['call_id']}=already refunded by bank transfer",
        *MODEL,
    )
    assert done.returncode == 0, done.stderr
    assert "result (" in done.stdout
    tree = json.loads(command("runs", "show", "refund-3", "--store", str(store), "--json").stdout)
    inner = tree["root"]["turns"][0]["calls"][1]["execs"][0]["turns"][0]["calls"][1]
    assert inner["result"] == (
        "Tool call 'issue_refund' was denied: already refunded by bank transfer"
    )
    assert inner["decision"] == "denied: already refunded by bank transfer"


def test_mistakes_are_usage_errors(tmp_path: Path) -> None:
    store = tmp_path / "runs.sqlite"
    paused_run(store, "refund-4")
    missing = command("runs", "--store", str(tmp_path / "nope.sqlite"))
    assert missing.returncode == 2
    assert "no such file" in missing.stderr
    assert command("runs", "show", "--store", str(store)).returncode == 2
    assert command("runs", "refund-4", "--store", str(store)).returncode == 2
    unknown = command("runs", "show", "nope", "--store", str(store))
    assert (unknown.returncode, "holds no such run" in unknown.stderr) == (2, True)
    bad_deny = command("resume", "refund-4", "--store", str(store), "--deny", "call_1", *MODEL)
    assert (bad_deny.returncode, "CALL=REASON" in bad_deny.stderr) == (2, True)
    stranger = command("resume", "refund-4", "--store", str(store), "--approve", "call_x", *MODEL)
    assert stranger.returncode == 2
    assert "is not a call the run waits on" in stranger.stderr
