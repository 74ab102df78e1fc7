"""The output file survives crashes anywhere, and unwritable outputs fail only their item."""

from __future__ import annotations

import json
import logging
import math
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import pytest

from openprogram import batch
from openprogram.exceptions import UserError

ROOT = Path(__file__).resolve().parents[2]


def records(path: Path) -> list[dict[str, Any]]:
    """Every line of ``path`` as a record (fails on any line that is not one)."""
    return [json.loads(line) for line in path.read_bytes().split(b"\n") if line]


# -- torn lines ------------------------------------------------------------------------------

CHILD = """
import sys
from openprogram import batch

SIZE = int(sys.argv[2])

def big(item):
    return item + "é" * SIZE      # two UTF-8 bytes each: tears can split a character

batch.map(big, [f"item{i}" for i in range(int(sys.argv[3]))], output=sys.argv[1], concurrency=1)
"""


def _child(
    script: Path, out: Path, size: int, count: int, stderr: int = subprocess.DEVNULL
) -> subprocess.Popen[bytes]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.Popen(
        [sys.executable, str(script), str(out), str(size), str(count)], env=env, stderr=stderr
    )


def _kill_mid_write(script: Path, out: Path, size: int, count: int) -> bool:
    """Resume the batch in a child and SIGKILL it while it writes a record; torn?"""
    before = out.stat().st_size if out.exists() else 0
    child = _child(script, out, size, count)
    record = 2 * size  # bytes of one record, about
    deadline = time.monotonic() + 60
    while child.poll() is None and time.monotonic() < deadline:
        grown = (out.stat().st_size if out.exists() else 0) - before
        if grown > 0 and grown % record:  # inside a record, not between two
            break
        time.sleep(0.0002)  # leave the (shared) cores to the child
    child.send_signal(signal.SIGKILL)
    child.wait()
    return not out.read_bytes().endswith(b"\n")


def test_records_torn_by_real_kills_anywhere_in_the_file_are_repaired(tmp_path: Path) -> None:
    script = tmp_path / "child.py"
    script.write_text(textwrap.dedent(CHILD))
    out = tmp_path / "big.jsonl"
    size, count = 1_000_000, 10
    tears = 0
    for _ in range(12):
        if _kill_mid_write(script, out, size, count):
            tears += 1
        else:  # the kill fell between two records: make writing take longer
            size = min(2 * size, 16_000_000)
        if tears >= 3:
            break
    assert tears >= 2, "no kill landed inside a write, even of 32 MB records"
    # Every kill left the file resumable, and the last run finishes the batch.
    child = _child(script, out, size, count, stderr=subprocess.PIPE)
    _, stderr = child.communicate(timeout=300)
    assert child.returncode == 0, stderr.decode(errors="replace")[-2000:]
    found = records(out)  # no torn line is left anywhere
    done = {r["key"]: r for r in found if r["ok"]}
    assert len(done) == count
    names = sorted(r["output"].rstrip("é") for r in done.values())
    assert names == sorted(f"item{i}" for i in range(count))
    assert all(r["output"].count("é") >= 1_000_000 for r in done.values())


def test_hand_torn_lines_in_the_middle_are_skipped_and_removed(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    out = tmp_path / "torn.jsonl"
    batch.map(str.upper, ["a", "b", "c", "d"], output=out)
    lines = out.read_bytes().split(b"\n")[:-1]
    by_output = {json.loads(line)["output"]: line for line in lines}
    torn_b = by_output["B"][: len(by_output["B"]) // 2]
    e_acute = "é".encode()
    torn_c = by_output["C"].replace(b'"C"', b'"C' + e_acute + b'"')
    torn_c = torn_c[: torn_c.index(e_acute) + 1]  # cut inside a two-byte character
    out.write_bytes(
        b"\n".join([by_output["A"], torn_b, b'{"ke', torn_c, by_output["D"], b'{"key": "']) + b"\n"
    )
    calls: list[str] = []

    def upper(item: str) -> str:
        calls.append(item)
        return item.upper()

    with caplog.at_level(logging.WARNING, logger="openprogram.batch"):
        first = batch.map(upper, ["a", "b", "c", "d"], output=out)
    assert sorted(calls) == ["b", "c"]
    assert first.outputs == ["A", "B", "C", "D"]
    assert "ignoring 4 line(s) torn by a crash mid-write (line 2, 3, 4, 6)" in caplog.text
    assert sorted(r["output"] for r in records(out)) == ["A", "B", "C", "D"]
    # Resumable again, and again.
    second = batch.map(upper, ["a", "b", "c", "d", "e"], output=out)
    assert calls[2:] == ["e"]
    assert [item.resumed for item in second] == [True, True, True, True, False]


def test_a_line_that_was_never_a_record_is_still_refused(tmp_path: Path) -> None:
    out = tmp_path / "edited.jsonl"
    batch.map(str.upper, ["a"], output=out)
    good = out.read_bytes()
    for bad in (b"hello", b'{"output": "x"}', b"[1, 2]", b'{"key": 3}'):
        out.write_bytes(good + bad + b"\n" + good)
        with pytest.raises(UserError, match=r"edited.jsonl:2: not a batch record"):
            batch.map(str.upper, ["a"], output=out)


def test_line_separators_inside_outputs_do_not_split_records(tmp_path: Path) -> None:
    out = tmp_path / "separators.jsonl"
    texts = ["a\u2028b", "c\u2029d", "e\x85f", "g\x1ch", "i\rj"]
    batch.map(lambda t: t, texts, output=out)
    again = batch.map(lambda t: pytest.fail("resumed items must not run"), texts, output=out)
    assert again.outputs == texts
    assert all(item.resumed for item in again)


# -- unwritable outputs ----------------------------------------------------------------------


class Loop(list[Any]):
    """A list containing itself (circular: no JSON form)."""


def _unwritable(item: int) -> Any:
    if item == 3:
        return os.fsdecode(b"report-\xff.txt")  # a lone surrogate (surrogateescape)
    if item == 7:
        return {"score": math.nan}
    if item == 11:
        return [math.inf]
    if item == 13:
        return object()
    if item == 17:
        loop = Loop()
        loop.append(loop)
        return loop
    return f"ok {item}"


def _not_json(name: str) -> Any:
    raise AssertionError(f"{name} is not JSON")


def test_unwritable_outputs_fail_only_their_own_item(tmp_path: Path) -> None:
    out = tmp_path / "mixed.jsonl"
    result = batch.map(_unwritable, range(20), output=out, concurrency=4)
    bad = {3, 7, 11, 13, 17}
    assert [item.index for item in result.failed] == sorted(bad)
    assert [item.output for item in result.succeeded] == [
        f"ok {i}" for i in range(20) if i not in bad
    ]
    errors = {item.index: str(item.error) for item in result.failed}
    assert errors[3].startswith("ValueError: the output of input #3 (str) cannot be written")
    assert "lone surrogate '\\udcff'" in errors[3]
    assert "surrogateescape" in errors[3]
    for index in (7, 11):
        assert errors[index].startswith("ValueError:")
        assert "NaN or an infinite float" in errors[index]
    assert errors[13].startswith("TypeError:")
    assert "object is not JSON-serializable" in errors[13]
    assert "Circular reference" in errors[17]
    text = out.read_bytes().decode("utf-8")  # strict UTF-8
    written = [json.loads(line, parse_constant=_not_json) for line in text.splitlines()]
    assert sorted(r["index"] for r in written) == list(range(20))  # every item has its line
    # A re-run runs exactly the failed items again.
    ran: list[int] = []

    def count(item: int) -> Any:
        ran.append(item)
        return _unwritable(item)

    batch.map(count, range(20), output=out)
    assert sorted(ran) == sorted(bad)


def test_lone_surrogates_in_keys_and_error_texts_are_written_exactly(tmp_path: Path) -> None:
    out = tmp_path / "names.jsonl"
    names = [os.fsdecode(b"a-\xfe"), "plain", os.fsdecode(b"b-\xfd")]

    def open_it(name: str) -> str:
        if name.startswith("b"):
            raise FileNotFoundError(f"no such file: {name}")
        return "read"

    first = batch.map(open_it, names, output=out, key=lambda name: name)
    assert [item.ok for item in first] == [True, True, False]
    assert str(first[2].error) == f"FileNotFoundError: no such file: {names[2]}"
    out.read_bytes().decode("utf-8")  # strict UTF-8 all the same
    keys = {r["key"] for r in records(out)}
    assert keys == set(names)
    again = batch.map(open_it, names, output=out, key=lambda name: name)
    assert [item.resumed for item in again] == [True, True, False]
