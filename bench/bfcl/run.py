"""BFCL (v4) on the embedded model: openprogram vs raw llama.cpp with two chat templates.

Usage (after ``bash bench/bfcl/setup.sh``, with the python it prints)::

    python bench/bfcl/run.py --per-category 50 --seed 0 \\
        --clients openprogram,raw_builtin,raw_ours --categories simple_python,irrelevance

Clients (one at a time, each with its own llama.cpp server, stopped before
the next starts, so prompt caches never cross clients and only one model
runs): ``openprogram`` = ``Runtime.exec`` through ``LocalProvider`` and the
embedded server it starts; ``raw_builtin`` = plain HTTP to a server using the
GGUF's own chat template; ``raw_ours`` = plain HTTP to a server using
``chat_template.jinja`` (or ``--template``). ``--base-url CLIENT=URL`` points a
client at a running server instead (the tests use a fake one).

Prints a markdown table and writes every answer and verdict to ``--out``
(default ``bench/results/bfcl.json``).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

_HERE = Path(__file__).resolve().parent
_REPO = _HERE.parents[1]
# This checkout's openprogram and the harness modules beside this file come first.
for _path in (str(_HERE), str(_REPO)):
    if _path not in sys.path:
        sys.path.insert(0, _path)

import bfcl_data  # noqa: E402 -- needs the paths above
import bfcl_report  # noqa: E402
import bfcl_schema  # noqa: E402
from bfcl_clients import Client, OpenProgramClient, Outcome, RawClient  # noqa: E402

from openprogram.providers.local import LOCAL_MODEL, LOCAL_MODELS  # noqa: E402

CLIENTS = ("openprogram", "raw_builtin", "raw_ours")
Scorer = Callable[[bfcl_data.Question, list[dict[str, dict[str, Any]]] | None], bool | None]


def _parse(argv: Sequence[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--per-category", type=int, default=50, help="questions per category")
    p.add_argument("--seed", type=int, default=0, help="seed of the sample")
    p.add_argument("--clients", default=",".join(CLIENTS), help="comma-separated")
    p.add_argument(
        "--model",
        default=LOCAL_MODEL,
        choices=LOCAL_MODELS,
        help="embedded model every started server runs (default: %(default)s)",
    )
    p.add_argument("--categories", default=",".join(bfcl_data.CATEGORIES), help="comma-separated")
    p.add_argument("--data-dir", type=Path, help="BFCL data folder (default: bfcl-eval's own)")
    p.add_argument("--max-tokens", type=int, default=512, help="reply cap, same for all")
    p.add_argument("--temperature", type=float, default=0.0)
    p.add_argument("--template", type=Path, help="raw_ours template (default: the shipped one)")
    p.add_argument(
        "--no-cache-prompt",
        action="store_true",
        help="raw clients send cache_prompt=false (their own servers anyway)",
    )
    p.add_argument(
        "--base-url",
        action="append",
        default=[],
        metavar="CLIENT=URL",
        help="use a running server (with /v1) for CLIENT instead of starting one",
    )
    p.add_argument("--no-score", action="store_true", help="skip BFCL's checker")
    p.add_argument("--out", type=Path, default=_REPO / "bench" / "results" / "bfcl.json")
    args = p.parse_args(argv)
    args.clients = _names(args.clients, CLIENTS, "client")
    args.categories = _names(args.categories, bfcl_data.CATEGORIES, "category")
    args.base_urls = dict(_pair(v) for v in args.base_url)
    if args.per_category < 1:
        p.error("--per-category must be at least 1")
    return args


def _names(value: str, known: Sequence[str], what: str) -> list[str]:
    names = [n.strip() for n in value.split(",") if n.strip()]
    unknown = [n for n in names if n not in known]
    if unknown or not names:
        raise SystemExit(f"unknown {what} {unknown or value!r}; choose from {', '.join(known)}")
    return names


def _pair(value: str) -> tuple[str, str]:
    client, sep, url = value.partition("=")
    if not sep or client not in CLIENTS or not url:
        raise SystemExit(f"--base-url {value!r}: write CLIENT=URL with CLIENT in {CLIENTS}")
    return client, url


def _bfcl_scorer() -> Scorer:
    import bfcl_score

    if not bfcl_score.checker_available():
        raise SystemExit(
            "BFCL's checker does not import here: run `bash bench/bfcl/setup.sh` "
            "and use its python, or pass --no-score"
        )

    def scorer(q: bfcl_data.Question, answer: list[dict[str, dict[str, Any]]] | None) -> bool:
        return bfcl_score.score(q.category, q.functions, q.ground_truth, answer).valid

    return scorer


@contextlib.contextmanager
def _client(name: str, args: argparse.Namespace) -> Iterator[Client]:
    """The client, with its server started before and stopped after (unless given a URL)."""
    url = args.base_urls.get(name)
    sampling = {"temperature": args.temperature, "max_tokens": args.max_tokens}
    if name == "openprogram":
        from openprogram.providers.local import ensure_server, stop_server

        if url is None:
            ensure_server(args.model)  # untimed: loading the model is not a question's latency
        try:
            yield OpenProgramClient(model=args.model, base_url=url, **sampling)
        finally:
            if url is None:
                stop_server(args.model)
        return
    with contextlib.ExitStack() as stack:
        if url is None:
            from bfcl_servers import RawServer

            url = stack.enter_context(RawServer(_template(name, args), args.model)).base_url
        raw = RawClient(name, base_url=url, cache_prompt=not args.no_cache_prompt, **sampling)
        stack.callback(raw.close)
        yield raw


def _template(name: str, args: argparse.Namespace) -> str:
    if name == "raw_builtin":
        return ""  # llama.cpp then uses the chat template stored in the GGUF
    if args.template is not None:
        return str(args.template.read_text(encoding="utf-8"))
    from openprogram.providers.local import PROFILES

    return PROFILES[args.model].chat_template()


def _record(
    q: bfcl_data.Question, client: str, outcome: Outcome, scorer: Scorer | None
) -> dict[str, Any]:
    answer = None if outcome.error else bfcl_schema.bfcl_answer(outcome.calls)
    return {
        "id": q.id,
        "category": q.category,
        "client": client,
        "answer": answer,
        "text": outcome.text[:2000],
        "error": outcome.error,
        "seconds": round(outcome.seconds, 4),
        "valid": scorer(q, answer) if scorer is not None else None,
    }


def run_benchmark(args: argparse.Namespace) -> dict[str, Any]:
    """Ask every sampled question through every client; score; return everything."""
    data_dir = args.data_dir or bfcl_data.default_data_dir()
    scorer = None if args.no_score else _bfcl_scorer()
    questions = [
        q
        for category in args.categories
        for q in bfcl_data.sample(
            bfcl_data.load_category(data_dir, category), args.per_category, args.seed
        )
    ]
    records: list[dict[str, Any]] = []
    notes: dict[str, str] = {}
    started = time.monotonic()
    for name in args.clients:
        with _client(name, args) as client:
            if isinstance(client, OpenProgramClient):
                notes["openprogram_sampling_via"] = client.sampling_via
            for i, q in enumerate(questions, 1):
                record = _record(q, name, client.ask(q), scorer)
                records.append(record)
                mark = {True: "ok", False: "wrong", None: "-"}[record["valid"]]
                print(
                    f"[{name} {i}/{len(questions)}] {q.id}: {mark} "
                    f"{record['seconds']:.2f}s {record['error'] or ''}"[:200],
                    file=sys.stderr,
                )
    summary = bfcl_report.summarize(records, args.clients, args.categories)
    settings = {k: v for k, v in vars(args).items() if k not in ("base_url",)}
    settings.update(notes)
    return {
        "settings": json.loads(json.dumps(settings, default=str)),
        "summary": summary,
        "records": records,
        "wall_seconds": round(time.monotonic() - started, 1),
    }


def main(argv: Sequence[str] | None = None) -> int:
    args = _parse(argv)
    result = run_benchmark(args)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=1), encoding="utf-8")
    print(bfcl_report.markdown(result["summary"], args.clients, args.categories))
    print(f"\n{len(result['records'])} answers in {result['wall_seconds']} s; all in {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
