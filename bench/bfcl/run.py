"""BFCL on the embedded model: openprogram's LocalProvider against the same model called raw.

Categories ``simple_python``, ``multiple``, ``parallel``, ``parallel_multiple``
and ``irrelevance`` of BFCL v4 (``bfcl-eval==2026.3.23``), a seeded sample per
category, scored with BFCL's own AST checker (``bfcl_eval.eval_checker``);
an irrelevance question is right when no function is called (BFCL's rule).

Clients, each on its own llama.cpp server (so no client reuses another's
prompt cache), one after the other:

- ``openprogram``: ``LocalProvider.stream`` with the question and the functions
  (our template, our grammar, our parsing and re-asks);
- ``raw-ours``: Chat Completions with ``tools``, server running our template
  (llama.cpp parses the calls);
- ``raw-builtin``: the same, server running the model's built-in template.

Set up once (bfcl-eval's own dependency list pulls in torch; its checker needs
none of it)::

    bash bench/bfcl/setup.sh            # makes /tmp/bfcl-venv with bfcl-eval --no-deps
    python bench/bfcl/run.py --per-category 50 --seed 0

Run it with the interpreter that has openprogram and its ``local`` extra.
"""

from __future__ import annotations

import argparse
import asyncio
import glob
import json
import random
import statistics
import sys
import time
import types
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

CATEGORIES = ("simple_python", "multiple", "parallel", "parallel_multiple", "irrelevance")
CLIENTS = ("openprogram", "raw-ours", "raw-builtin")
MODEL_NAME = "openprogram-local"
_TYPES = {"dict": "object", "float": "number", "tuple": "array", "any": None}


def import_bfcl(venv: str) -> Any:
    """``bfcl_eval``'s AST checker, with the model table stubbed (it imports every vendor SDK)."""
    for site in glob.glob(f"{venv}/lib/python3*/site-packages"):
        sys.path.append(site)
    config = types.ModuleType("bfcl_eval.constants.model_config")
    config.MODEL_CONFIG_MAPPING = {  # type: ignore[attr-defined]
        MODEL_NAME.replace("_", "/"): types.SimpleNamespace(underscore_to_dot=True)
    }
    sys.modules["bfcl_eval.constants.model_config"] = config
    from bfcl_eval.constants.enums import Language
    from bfcl_eval.eval_checker.ast_eval import ast_checker

    return types.SimpleNamespace(check=ast_checker.ast_checker, python=Language.PYTHON)


def load(venv: str, category: str, n: int, seed: int) -> list[tuple[dict[str, Any], Any]]:
    """A seeded sample of ``(question, possible answer)`` pairs of one category."""
    (data,) = glob.glob(f"{venv}/lib/python3*/site-packages/bfcl_eval/data")
    text = Path(data, f"BFCL_v4_{category}.json").read_text(encoding="utf-8")
    questions = [json.loads(x) for x in text.splitlines() if x.strip()]
    answers: dict[str, Any] = {}
    answer_file = Path(data, "possible_answer", f"BFCL_v4_{category}.json")
    if answer_file.exists():
        lines = answer_file.read_text(encoding="utf-8").splitlines()
        answers = {a["id"]: a["ground_truth"] for a in map(json.loads, filter(None, lines))}
    picked = random.Random(f"{seed}:{category}").sample(questions, min(n, len(questions)))
    return [(q, answers.get(q["id"])) for q in picked]


def json_schema(schema: Any) -> Any:
    """BFCL's parameter schema (``dict``, ``float``, ``tuple``, ``any``) as JSON Schema."""
    if isinstance(schema, list):
        return [json_schema(s) for s in schema]
    if not isinstance(schema, Mapping):
        return schema
    out = {k: json_schema(v) for k, v in schema.items() if k not in ("type", "properties")}
    if isinstance(schema.get("type"), str):
        kind = _TYPES.get(schema["type"], schema["type"])
        if kind is not None:
            out["type"] = kind
    if "properties" in schema:
        out["properties"] = {k: json_schema(v) for k, v in schema["properties"].items()}
    return out


def functions(question: Mapping[str, Any]) -> list[dict[str, Any]]:
    return [
        {
            "name": f["name"].replace(".", "_"),
            "description": f.get("description", ""),
            "parameters": json_schema(f["parameters"]),
        }
        for f in question["function"]
    ]


def user_text(question: Mapping[str, Any]) -> list[dict[str, str]]:
    return [m for m in question["question"][0] if m["role"] in ("user", "system")]


@dataclass
class Outcome:
    calls: list[dict[str, Any]]
    seconds: float
    error: str | None = None


# -- clients ----------------------------------------------------------------------------------


def openprogram_client(base_url: str) -> Callable[[dict[str, Any]], Outcome]:
    from openprogram.messages import UserMessage
    from openprogram.providers.base import ProviderRequest, ResponseDone
    from openprogram.providers.local import LocalProvider

    provider = LocalProvider(base_url=base_url, timeout=600, extra_body={"max_tokens": 512})

    async def ask(question: dict[str, Any]) -> list[dict[str, Any]]:
        messages = user_text(question)
        system = "\n".join(m["content"] for m in messages if m["role"] == "system") or None
        request = ProviderRequest(
            model=None,
            system=system,
            messages=tuple(UserMessage(m["content"]) for m in messages if m["role"] == "user"),
            tools=tuple(functions(question)),  # type: ignore[arg-type]
        )
        async for event in provider.stream(request):
            if isinstance(event, ResponseDone):
                return [{c.name: dict(c.arguments)} for c in event.message.tool_calls]
        return []

    def run(question: dict[str, Any]) -> Outcome:
        started = time.monotonic()
        try:
            calls = asyncio.run(ask(question))
        except Exception as exc:  # noqa: BLE001 -- any failure is a wrong answer, recorded
            return Outcome([], time.monotonic() - started, f"{type(exc).__name__}: {exc}")
        return Outcome(calls, time.monotonic() - started)

    return run


def raw_client(base_url: str) -> Callable[[dict[str, Any]], Outcome]:
    def run(question: dict[str, Any]) -> Outcome:
        body = {
            "model": "local",
            "messages": user_text(question),
            "tools": [{"type": "function", "function": f} for f in functions(question)],
            "tool_choice": "auto",
            "temperature": 0,
            "max_tokens": 512,
        }
        started = time.monotonic()
        response = httpx.post(f"{base_url}/chat/completions", json=body, timeout=600)
        seconds = time.monotonic() - started
        if response.status_code != 200:
            return Outcome([], seconds, f"HTTP {response.status_code}: {response.text[:200]}")
        message = response.json()["choices"][0]["message"]
        calls = []
        for call in message.get("tool_calls") or []:
            fn = call["function"]
            try:
                arguments = json.loads(fn["arguments"] or "{}")
            except json.JSONDecodeError:
                arguments = {}
            calls.append({fn["name"]: arguments})
        return Outcome(calls, seconds)

    return run


# -- servers ----------------------------------------------------------------------------------


def start_server(template: str) -> tuple[Any, str]:
    """A supervised llama.cpp server running ``template`` ("" means the model's own)."""
    from openprogram.providers.local import _server

    supervisor = _server.Supervisor()
    original = _server.chat_template
    _server.chat_template = lambda: template  # type: ignore[assignment]
    try:
        url = supervisor.ensure()
    finally:
        _server.chat_template = original  # type: ignore[assignment]
    return supervisor, url


def score(bfcl: Any, category: str, question: dict[str, Any], answer: Any, out: Outcome) -> bool:
    if category == "irrelevance":
        return not out.calls
    if not out.calls:
        return False
    result = bfcl.check(question["function"], out.calls, answer, bfcl.python, category, MODEL_NAME)
    return bool(result["valid"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--venv", default="/tmp/bfcl-venv")
    parser.add_argument("--per-category", type=int, default=50)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--categories", default=",".join(CATEGORIES))
    parser.add_argument("--clients", default=",".join(CLIENTS))
    parser.add_argument("--out", default="bench/bfcl/results.jsonl")
    args = parser.parse_args()
    bfcl = import_bfcl(args.venv)
    from openprogram.providers.local._server import chat_template

    samples = {
        c: load(args.venv, c, args.per_category, args.seed) for c in args.categories.split(",")
    }
    table: dict[tuple[str, str], tuple[int, int, float, int]] = {}
    with open(args.out, "w", encoding="utf-8") as log:
        for client in args.clients.split(","):
            supervisor, url = start_server("" if client == "raw-builtin" else chat_template())
            ask = openprogram_client(url) if client == "openprogram" else raw_client(url)
            try:
                for category, items in samples.items():
                    right, times, errors = 0, [], 0
                    for question, answer in items:
                        out = ask(question)
                        ok = score(bfcl, category, question, answer, out)
                        right += ok
                        times.append(out.seconds)
                        errors += out.error is not None
                        log.write(
                            json.dumps(
                                {
                                    "client": client,
                                    "category": category,
                                    "id": question["id"],
                                    "ok": ok,
                                    "calls": out.calls,
                                    "seconds": round(out.seconds, 2),
                                    "error": out.error,
                                }
                            )
                            + "\n"
                        )
                        log.flush()
                    table[(client, category)] = (
                        right,
                        len(items),
                        statistics.median(times),
                        errors,
                    )
                    print(
                        f"{client:12} {category:18} {right}/{len(items)} "
                        f"median {statistics.median(times):.1f} s errors {errors}",
                        flush=True,
                    )
            finally:
                supervisor.stop()
    print("\n| category | " + " | ".join(args.clients.split(",")) + " |")
    print("|---|" + "---|" * len(args.clients.split(",")))
    for category in samples:
        cells = []
        for client in args.clients.split(","):
            right, n, median, errors = table[(client, category)]
            failed = f", {errors} errors" if errors else ""
            cells.append(f"{right}/{n} ({median:.1f} s{failed})")
        print(f"| {category} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
