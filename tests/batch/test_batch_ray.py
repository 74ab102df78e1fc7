"""The Ray backend against a real local Ray instance (started once for the module).

Ray takes seconds to start, so the assertions are batched into few tests. The
functions and provider factories sent to the workers live in
``tests/batch/helpers.py`` and are imported under the name the workers import
them by (``tests.batch.helpers``).
"""

from __future__ import annotations

import asyncio
import importlib
import itertools
import re
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
import ray

from openprogram import batch
from openprogram.batch import Progress
from openprogram.exceptions import UserError
from openprogram.testing import ALLOW_ENV_VAR, allow_model_requests, block_model_requests

pytestmark = pytest.mark.ray

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:  # `pytest` (unlike `python -m pytest`) does not add the cwd
    sys.path.insert(0, str(ROOT))
helpers = importlib.import_module("tests.batch.helpers")


@pytest.fixture(scope="module", autouse=True)
def local_ray() -> Iterator[None]:
    ray.init(
        num_cpus=2,
        include_dashboard=False,
        # Workers import openprogram and tests.batch.helpers from the repository.
        runtime_env={"env_vars": {"PYTHONPATH": str(ROOT)}},
    )
    yield
    ray.shutdown()


def test_items_run_as_ray_tasks_with_per_item_results_progress_and_resume(
    tmp_path: Path,
) -> None:
    out = tmp_path / "ray.jsonl"
    inputs = ["a", "boom b", "c", "d"]
    seen: list[Progress] = []
    result = batch.map(
        helpers.shout,
        inputs,
        backend="ray",
        provider=helpers.shouting_provider,
        concurrency=3,
        output=out,
        on_progress=seen.append,
    )
    assert [item.output for item in result] == ["A", None, "C", "D"]
    error = result[1].error
    assert error is not None
    assert (error.type, error.message) == ("RuntimeError", "the model choked on 'boom b'")
    assert "helpers.py" in error.traceback  # raised in the worker, traceback kept
    assert [p.done for p in seen] == [1, 2, 3, 4]
    assert seen[-1].failed == 1

    again = batch.map(
        helpers.shout, inputs, backend="ray", provider=helpers.shouting_provider, output=out
    )
    assert [item.resumed for item in again] == [True, False, True, True]
    assert again[1].error is not None

    # sync bodies, unpacked arguments, functions shipped by value, two worker processes
    sync = batch.map(helpers.shout_sync, ["x"], backend="ray", provider=helpers.shouting_provider)
    assert sync.outputs == ["X"]
    greetings = batch.map(
        helpers.greet, [{"name": "ann"}, ("bob", "?")], backend="ray", unpack=True
    )
    assert greetings.outputs == ["hello ann!", "hello bob?"]
    assert batch.map(lambda x: x * 2, [1, 2], backend="ray").outputs == [2, 4]
    pids = batch.map(helpers.where, range(6), backend="ray", concurrency=4).outputs
    assert len(set(pids)) == 2


def test_a_rate_limit_is_shared_by_all_workers_and_failures_stay_per_item(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # 10 calls/s from two workers at once: model calls one slot (100 ms) apart.
    stamps = batch.map(
        helpers.stamp,
        range(5),
        backend="ray",
        provider=helpers.clock_provider,
        rate_limit=10,
        concurrency=2,
        ray_options={"num_cpus": 1, "max_retries": 0},
    ).outputs
    gaps = [b - a for a, b in itertools.pairwise(sorted(stamps))]
    assert min(gaps) > 0.05, gaps  # unlimited, two workers would answer within milliseconds

    # A lost worker fails its item only.
    crashed = batch.map(
        helpers.crash, ["ok", "die", "fine"], backend="ray", ray_options={"max_retries": 0}
    )
    assert [item.ok for item in crashed] == [True, False, True]
    assert crashed[1].error is not None
    assert "ray" in crashed[1].error.type.lower()

    # A function the workers cannot import: each item says so and how to fix it.
    (tmp_path / "only_here.py").write_text("def double(x):\n    return 2 * x\n")
    monkeypatch.syspath_prepend(str(tmp_path))  # on the driver's path, not the workers'
    only_here = importlib.import_module("only_here")
    lost = batch.map(only_here.double, [1], backend="ray")
    error = lost[0].error
    assert error is not None
    assert error.type == "openprogram.exceptions.ConfigurationError"
    assert "cannot import only_here.double on the Ray worker" in error.message
    assert "runtime_env" in error.message

    # A function that cannot travel at all is refused before any task runs.
    lock = threading.Lock()
    with pytest.raises(UserError, match="cannot send the function, provider or runtime_options"):
        batch.map(lambda x: lock.locked() or x, [1], backend="ray")

    with pytest.raises(UserError, match="Ray is already initialized"):
        batch.map(helpers.greet, ["x"], backend="ray", ray_address="auto")

    # amap keeps the blocking Ray driver off the event loop.
    result = asyncio.run(batch.amap(helpers.slow_echo, ["e"], backend="ray"))
    assert result.outputs == ["e"]


def test_the_drivers_model_request_setting_holds_in_the_workers() -> None:
    # The workers were started under the suite's OPENPROGRAM_ALLOW_MODEL_REQUESTS=0 ...
    with allow_model_requests():
        assert batch.map(helpers.requests_allowed, [1], backend="ray").outputs == [True]
    # ... and these under =1: a block around batch.map still reaches them.
    allowing = {"env_vars": {"PYTHONPATH": str(ROOT), ALLOW_ENV_VAR: "1"}}
    with block_model_requests():
        blocked = batch.map(
            helpers.requests_allowed, [1], backend="ray", ray_options={"runtime_env": allowing}
        )
    assert blocked.outputs == [False]


def test_the_ray_examples_of_the_batch_docs_run() -> None:
    """Every runnable block of docs/batch.md, and the Ray block the docs test skips."""
    text = (ROOT / "docs" / "batch.md").read_text(encoding="utf-8")
    blocks = re.finditer(r"(<!-- no-run: ([^>]+)-->\n)?^```python\n(.*?)^```", text, re.M | re.S)
    namespace: dict[str, object] = {"__name__": "docs_batch_on_ray"}
    ran_ray_block = False
    for match in blocks:
        reason = match.group(2) or ""
        if match.group(1) and "test_batch_ray.py" not in reason:
            continue  # needs a real cluster
        line = text.count("\n", 0, match.start(3)) + 1
        exec(compile(match.group(3), f"docs/batch.md:{line}", "exec", dont_inherit=True), namespace)
        ran_ray_block = ran_ray_block or "test_batch_ray.py" in reason
    assert ran_ray_block
