"""``submit``, ``submit_resume``, ``result`` and ``Worker``: what they refuse, and failed runs."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest

from openprogram import JournalDivergence, RunFailed, Runtime
from openprogram.exceptions import ConfigurationError, UserError
from openprogram.providers.base import ProviderRequest
from openprogram.stores import MemoryStore, SQLiteStore
from openprogram.stores.dbos import DBOSStore, Worker
from openprogram.testing import FunctionProvider

from ._workers import WAIT_S, Workers


def answer(request: ProviderRequest) -> str:
    text = request.messages[0].text
    if text == "fail":
        raise ValueError("the model is down")
    return f"re: {text}"


@pytest.fixture
def url(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'runs.sqlite'}"


@pytest.fixture
def runtime(url: str) -> Iterator[Runtime]:
    with DBOSStore(url) as store:
        yield Runtime(FunctionProvider(answer), store=store)


def test_a_store_without_a_queue_is_refused(tmp_path: Path) -> None:
    for store in (MemoryStore(), SQLiteStore(tmp_path / "runs.sqlite")):
        with pytest.raises(ConfigurationError, match="DBOSStore"):
            Runtime(FunctionProvider(answer), store=store).submit("hi")
        with pytest.raises(ConfigurationError, match="DBOSStore"):
            Worker(Runtime(FunctionProvider(answer), store=store))


def test_a_run_id_submitted_again_with_another_request_is_refused(runtime: Runtime) -> None:
    assert runtime.submit("hi", run_id="r1") == "r1"
    assert runtime.submit("hi", run_id="r1") == "r1"  # the same: attaches
    with pytest.raises(JournalDivergence, match="other content or options"):
        runtime.submit("hello", run_id="r1")


def test_unknown_runs_and_finished_ones_are_said_so(runtime: Runtime) -> None:
    with pytest.raises(UserError, match="no run 'nope'"):
        runtime.result("nope")
    with pytest.raises(UserError, match="no run 'nope'"):
        runtime.submit_resume("nope", approve=["call_1"])
    with pytest.raises(TimeoutError, match="still running"):
        runtime.result(runtime.submit("hi"), timeout_s=0.1)  # no worker takes it


def test_a_worker_runs_runs_and_a_failed_run_reads_back_as_failed(runtime: Runtime) -> None:
    ok, failing = runtime.submit("hi"), runtime.submit("fail")
    with Worker(runtime, concurrency=2):
        assert runtime.result(ok, timeout_s=WAIT_S) == "re: hi"
        with pytest.raises(RunFailed, match="the model is down") as failed:
            runtime.result(failing, timeout_s=WAIT_S)
    assert failed.value.run_id == failing
    with pytest.raises(UserError, match="has finished"):
        runtime.submit_resume(ok)


def test_async_code_submits_runs_and_reads_back_without_blocking_its_loop(runtime: Runtime) -> None:
    async def main() -> tuple[str, list[int]]:
        ticks: list[int] = []

        async def tick() -> None:  # runs only while the loop is free
            while True:
                ticks.append(1)
                await asyncio.sleep(0.01)

        ticking = asyncio.create_task(tick())
        ok = await runtime.async_submit("hi", run_id="a1")
        failing = await runtime.async_submit("fail")
        with pytest.raises(TimeoutError, match="still running"):
            await runtime.async_result(ok, timeout_s=0.2)  # no worker yet
        with Worker(runtime, concurrency=2):
            output = await runtime.async_result(ok, timeout_s=WAIT_S)
            with pytest.raises(RunFailed, match="the model is down"):
                await runtime.async_result(failing, timeout_s=WAIT_S)
        with pytest.raises(UserError, match="has finished"):
            await runtime.async_submit_resume(ok)
        ticking.cancel()
        return output, ticks

    output, ticks = asyncio.run(main())
    assert output == "re: hi"
    assert len(ticks) >= 5  # the loop kept running while async_result waited (0.2 s alone)


def test_a_worker_refuses_the_id_of_a_live_worker(url: str, tmp_path: Path) -> None:
    workers = Workers(url, tmp_path / "steps.log")
    try:
        workers.start("taken")
        with DBOSStore(url) as store:
            worker = Worker(Runtime(FunctionProvider(answer), store=store), executor_id="taken")
            with pytest.raises(ConfigurationError, match="a live worker has this id"):
                worker.start()
    finally:
        workers.close()


def test_the_worker_command_refuses_a_model_and_a_runtime_at_once(url: str) -> None:
    import subprocess
    import sys

    from ._workers import ROOT

    argv = [sys.executable, "-m", "openprogram", "worker", "--store", url, "--model", "x:y"]
    argv += ["--runtime", "tests.scaleout._program:runtime"]
    done = subprocess.run(
        argv,
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=WAIT_S,
        check=False,
    )
    assert done.returncode == 2
    assert "--runtime and --model: give one" in done.stderr
