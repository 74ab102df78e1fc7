"""The output file (resumable runs) and progress reporting."""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from openprogram import batch
from openprogram.batch import Progress
from openprogram.exceptions import UserError


class Flaky:
    """Fails the first time it sees each input in ``fail_once``; counts every call."""

    def __init__(self, fail_once: set[str]) -> None:
        self.fail_once = set(fail_once)
        self.calls: list[str] = []

    def __call__(self, item: str) -> str:
        self.calls.append(item)
        if item in self.fail_once:
            self.fail_once.discard(item)
            raise ConnectionError(f"lost the connection on {item}")
        return item.upper()


def lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_a_rerun_skips_what_succeeded_and_retries_what_failed(tmp_path: Path) -> None:
    out = tmp_path / "run.jsonl"
    fn = Flaky({"b"})
    first = batch.map(fn, ["a", "b", "c"], output=out)
    assert [item.ok for item in first] == [True, False, True]
    records = lines(out)
    assert [
        (r["index"], r["ok"], r["output"]) for r in sorted(records, key=lambda r: r["index"])
    ] == [
        (0, True, "A"),
        (1, False, None),
        (2, True, "C"),
    ]
    failed = next(r for r in records if not r["ok"])
    assert failed["error"]["type"] == "ConnectionError"
    assert failed["error"]["message"] == "lost the connection on b"
    assert all(isinstance(r["key"], str) and r["duration_s"] >= 0 for r in records)

    second = batch.map(fn, ["a", "b", "c"], output=out)
    assert fn.calls == ["a", "b", "c", "b"]  # only the failed item ran again
    assert second.outputs == ["A", "B", "C"]
    assert [item.resumed for item in second] == [True, False, True]
    assert second[0].key == first[0].key

    third = batch.map(fn, ["a", "b", "c", "d"], output=out)
    assert fn.calls[4:] == ["d"]
    assert third.outputs == ["A", "B", "C", "D"]


def test_resumed_outputs_come_back_in_their_json_form(tmp_path: Path) -> None:
    class Answer(BaseModel):
        text: str

    @dataclass
    class Score:
        value: int

    def answer(item: int) -> Any:
        return Answer(text=f"n{item}") if item % 2 else Score(value=item)

    out = tmp_path / "typed.jsonl"
    first = batch.map(answer, [1, 2], output=out)
    assert first.outputs == [Answer(text="n1"), Score(value=2)]
    again = batch.map(answer, [1, 2], output=out)
    assert again.outputs == [{"text": "n1"}, {"value": 2}]


def test_an_output_that_cannot_be_written_fails_only_that_item(tmp_path: Path) -> None:
    out = tmp_path / "objects.jsonl"
    result = batch.map(lambda x: object() if x == 2 else x, [1, 2, 3], output=out)
    assert [item.ok for item in result] == [True, False, True]
    error = result[1].error
    assert error is not None
    assert error.type == "TypeError"
    assert "cannot be written to the output file as JSON" in error.message
    assert [r["ok"] for r in sorted(lines(out), key=lambda r: r["index"])] == [True, False, True]
    # without an output file, any value is fine
    assert batch.map(lambda x: object(), [1]).ok


def test_keys_default_to_the_input_json_and_can_be_given(tmp_path: Path) -> None:
    out = tmp_path / "keys.jsonl"
    rows = [{"id": 7, "q": "a"}, {"q": "b", "id": 8}]
    first = batch.map(lambda row: row["q"], rows, output=out, key=lambda row: f"row-{row['id']}")
    assert [item.key for item in first] == ["row-7", "row-8"]
    # same key, other content: still counted as done (the key is the identity)
    again = batch.map(
        lambda row: "ran", [{"id": 7, "q": "changed"}], output=out, key=lambda r: f"row-{r['id']}"
    )
    assert again[0].resumed
    assert again[0].output == "a"
    # the default key does not depend on dict order
    a = batch.map(str, [{"x": 1, "y": 2}], output=tmp_path / "a.jsonl")
    b = batch.map(str, [{"y": 2, "x": 1}], output=tmp_path / "b.jsonl")
    assert a[0].key == b[0].key
    assert batch.map(str, [1]).items[0].key is None  # no file, no key=: no key needed


def test_inputs_without_a_key_or_with_a_shared_key_are_refused(tmp_path: Path) -> None:
    out = tmp_path / "bad.jsonl"
    with pytest.raises(UserError, match=r"input #1 .* is not JSON-serializable.*pass key="):
        batch.map(str, [1, object()], output=out)
    with pytest.raises(UserError, match="inputs #0 and #2 have the same resume key"):
        batch.map(str, ["a", "b", "a"], output=out)
    with pytest.raises(UserError, match=r"returned 1 for input #0; a key must be a non-empty"):
        batch.map(str, ["a"], output=out, key=len)
    assert not out.exists()


def test_a_torn_last_line_is_run_again_and_a_broken_middle_line_is_refused(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    out = tmp_path / "torn.jsonl"
    batch.map(str.upper, ["a", "b"], output=out)
    done_b = next(line for line in out.read_text().splitlines() if '"B"' in line)
    kept = [line for line in out.read_text().splitlines() if line != done_b]
    out.write_text("\n".join(kept) + "\n" + done_b[: len(done_b) // 2])  # crash mid-write
    calls: list[str] = []

    def upper(item: str) -> str:
        calls.append(item)
        return item.upper()

    with caplog.at_level(logging.WARNING, logger="openprogram.batch"):
        result = batch.map(upper, ["a", "b"], output=out)
    assert calls == ["b"]
    assert result.outputs == ["A", "B"]
    assert "ignoring 1 line(s) torn by a crash mid-write (line 2)" in caplog.text
    # the torn line is gone and the new record is on a line of its own
    assert sorted(r["output"] for r in lines(out)) == ["A", "B"]

    out.write_text('{"key": "k", "ok": true}\nnot json\n{"key": "z", "ok": true}\n')
    with pytest.raises(UserError, match=r"torn.jsonl:2: not a batch record"):
        batch.map(upper, ["a"], output=out)


def test_progress_is_reported_after_every_item(tmp_path: Path) -> None:
    out = tmp_path / "progress.jsonl"
    batch.map(lambda x: 10 // x, [1, 2], output=out)
    seen: list[Progress] = []
    batch.map(lambda x: 10 // x, [1, 2, 0, 5], output=out, on_progress=seen.append, concurrency=1)
    assert [(p.done, p.succeeded, p.failed, p.resumed, p.total) for p in seen] == [
        (3, 2, 1, 2, 4),
        (4, 3, 1, 2, 4),
    ]
    assert [p.last.input for p in seen] == [0, 5]
    assert seen[-1].elapsed_s > 0
    assert seen[-1].rate == pytest.approx(2 / seen[-1].elapsed_s)


def test_a_raising_progress_callback_is_logged_and_ignored(
    caplog: pytest.LogCaptureFixture,
) -> None:
    def broken(progress: Progress) -> None:
        raise RuntimeError("display crashed")

    with caplog.at_level(logging.ERROR, logger="openprogram.batch"):
        result = batch.map(str, [1, 2], on_progress=broken)
    assert result.outputs == ["1", "2"]
    logged = [r for r in caplog.records if "on_progress callback" in r.getMessage()]
    assert len(logged) == 2
    assert all(r.exc_info is not None for r in logged)
