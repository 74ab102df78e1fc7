"""The BFCL benchmark harness (bench/bfcl), end to end against a fake loopback server.

The questions are our own, written in BFCL's v4 file format (``_questions.py``),
two per category; the fake server answers the first of each pair right and the
second wrong (one with an HTTP 500). Scoring with BFCL's checker needs
bfcl-eval, which is not a project dependency: that test runs the harness
with the benchmark venv's python (``bash bench/bfcl/setup.sh``), or with this
one if it has bfcl-eval, and is skipped when neither exists.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import jsonschema
import pytest

from bench_bfcl._questions import QUESTIONS, script, write_data

# The harness's clients send real requests to a fake llama.cpp server on 127.0.0.1.
pytestmark = pytest.mark.model_requests

_REPO = Path(__file__).resolve().parents[2]
_BFCL = _REPO / "bench" / "bfcl"
_CLIENTS = "openprogram,raw_builtin,raw_ours"


def _load(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"bfcl_bench_{name}", _BFCL / f"{name}.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


run = _load("run")  # puts bench/bfcl on sys.path, so its modules import by name
fake_server = _load("fake_server")
bfcl_schema = _load("bfcl_schema")


def _argv(data: Path, url: str, out: Path, *extra: str) -> list[str]:
    urls = [a for c in _CLIENTS.split(",") for a in ("--base-url", f"{c}={url}")]
    return [
        "--per-category",
        "2",
        "--seed",
        "1",
        "--clients",
        _CLIENTS,
        "--data-dir",
        str(data),
        "--out",
        str(out),
        *urls,
        *extra,
    ]


def _expected_answer(reply: dict[str, Any]) -> list[dict[str, Any]] | None:
    if "status" in reply:
        return None
    return [{name: args} for name, args in reply.get("calls", [])]


def test_every_client_gets_each_question_and_its_calls_in_bfcl_format(tmp_path: Path) -> None:
    data = write_data(tmp_path / "data")
    with fake_server.serve(script()) as fake:
        args = run._parse(_argv(data, fake.base_url, tmp_path / "out.json", "--no-score"))
        result = run.run_benchmark(args)
        requests = list(fake.requests)

    records = {(r["client"], r["id"]): r for r in result["records"]}
    assert len(records) == 3 * len(QUESTIONS)
    for client in _CLIENTS.split(","):
        for qid, _cat, _text, _fns, _truth, reply in QUESTIONS:
            record = records[(client, qid)]
            assert record["answer"] == _expected_answer(reply), (client, qid)
            assert (record["error"] is not None) == ("status" in reply), (client, qid)
    assert result["summary"]["errors"] == {"openprogram": 1, "raw_builtin": 1, "raw_ours": 1}
    kinds = result["summary"]["error_kinds"]
    assert kinds["openprogram"] == {"LLMError": 1}
    assert kinds["raw_ours"] == {"HTTP 500": 1}
    # Same sampling for every client; the raw ones are not streamed and say so.
    assert all(r["temperature"] == 0 for r in requests)
    assert all(r.get("max_tokens", r.get("max_completion_tokens")) == 512 for r in requests)
    assert {r.get("stream", False) for r in requests} == {True, False}
    assert all(r["cache_prompt"] is True for r in requests if not r.get("stream"))
    # Tools arrive as JSON Schema: BFCL's "float"/"tuple"/"dict" are mapped, dots replaced.
    lamp = next(
        t["function"]
        for r in requests
        for t in r.get("tools", [])
        if t["function"]["name"] == "lamp_switch"
    )
    assert lamp["parameters"]["type"] == "object"
    assert lamp["parameters"]["properties"]["colour"]["type"] == "array"


def test_bfcl_types_become_valid_json_schema() -> None:
    _id, _cat, _text, functions, _truth, _reply = QUESTIONS[1]  # convert_distance: float, any
    spec = bfcl_schema.tool_spec(functions[0])
    jsonschema.Draft202012Validator.check_schema(spec["parameters"])
    props = spec["parameters"]["properties"]
    assert spec["parameters"]["type"] == "object"
    assert props["value"]["type"] == "number"
    assert "type" not in props["precision"]  # "any": any JSON value
    validator = jsonschema.Draft202012Validator(spec["parameters"])
    assert validator.is_valid({"value": 26.2, "to_unit": "miles", "precision": 2})
    assert not validator.is_valid({"value": "far", "to_unit": "miles"})
    assert bfcl_schema.tool_name("arith.square") == "arith_square"


def _python_with_bfcl() -> str | None:
    cache = os.environ.get("OPENPROGRAM_BENCH_CACHE") or str(
        Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "openprogram-bench"
    )
    candidates = [Path(cache) / "bfcl-venv" / "bin" / "python", Path(sys.executable)]
    for python in candidates:
        if (
            python.exists()
            and subprocess.run(
                [str(python), "-c", "import bfcl_eval"], capture_output=True, check=False
            ).returncode
            == 0
        ):
            return str(python)
    return None


def test_bfcl_checker_scores_right_answers_correct_and_wrong_ones_wrong(tmp_path: Path) -> None:
    python = _python_with_bfcl()
    if python is None:
        pytest.skip("bfcl-eval is not installed: run `bash bench/bfcl/setup.sh`")
    data = write_data(tmp_path / "data")
    out = tmp_path / "out.json"
    env = {**os.environ, "PYTHONPATH": str(_REPO)}
    with fake_server.serve(script()) as fake:
        done = subprocess.run(
            [python, str(_BFCL / "run.py"), *_argv(data, fake.base_url, out)],
            capture_output=True,
            text=True,
            env=env,
            timeout=300,
            check=False,
        )
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads(out.read_text(encoding="utf-8"))
    for record in result["records"]:
        should_pass = record["id"].endswith("_0")
        assert record["valid"] is should_pass, record
    for client in _CLIENTS.split(","):
        for category in {q[1] for q in QUESTIONS}:
            cell = result["summary"]["cells"][client][category]
            assert (cell["correct"], cell["total"]) == (1, 2), (client, category)
    assert "| simple_python | 1/2 (" in done.stdout
