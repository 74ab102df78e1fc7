"""Runtime.exec / async_exec: the answer's type follows response_format and choices."""

from __future__ import annotations

import dataclasses
from typing import Annotated, Any, Literal, Optional, reveal_type

from pydantic import BaseModel, Field
from typing_extensions import TypedDict

from openprogram import Runtime, agentic_function

runtime = Runtime("openai:gpt-4o-mini")


class Invoice(BaseModel):
    number: str
    total: float


class Refund(BaseModel):
    amount: float


@dataclasses.dataclass
class Point:
    x: int
    y: int


class Totals(TypedDict):
    net: int
    tax: int


SCHEMA: dict[str, Any] = {"type": "object", "properties": {"n": {"type": "integer"}}}

reveal_type(runtime.exec("Say hello"))  # R: str
reveal_type(runtime.exec("Say hello", tools=[], max_iterations=3))  # R: str
reveal_type(runtime.exec("Read it", response_format=Invoice))  # R: exec_results.Invoice
quick = runtime.exec("Read it", response_format=Invoice, toolset="none")
reveal_type(quick)  # R: exec_results.Invoice
reveal_type(runtime.exec("Count", response_format=SCHEMA))  # R: Any
reveal_type(runtime.exec("Pick", choices=["a", "b"]))  # R: str
reveal_type(runtime.exec("Say hello", response_format=None))  # R: str
reveal_type(runtime.exec("Read it", response_format=Invoice, choices=None))  # R: exec_results.Invoice  # fmt: skip
reveal_type(runtime.exec("Pick", choices=["a", "b"], response_format=None))  # R: str
reveal_type(runtime.exec("Count", response_format=int))  # R: int
reveal_type(runtime.exec("List", response_format=list[int]))  # R: list[int]
reveal_type(runtime.exec("Map", response_format=dict[str, float]))  # R: dict[str, float]
reveal_type(runtime.exec("Pair", response_format=tuple[int, str]))  # R: tuple[int, str]
reveal_type(runtime.exec("Where", response_format=Point))  # R: exec_results.Point
reveal_type(runtime.exec("Sum", response_format=Totals))  # R: TypedDict(exec_results.Totals, {'net': int, 'tax': int})  # fmt: skip
reveal_type(runtime.exec("Pick", response_format=Literal["yes", "no"]))  # R: Any
reveal_type(runtime.exec("Bound", response_format=Annotated[int, Field(ge=0)]))  # R: Any
reveal_type(runtime.exec("Maybe", response_format=Optional[int]))  # R: Any  # noqa: UP045
reveal_type(runtime.exec("Either", response_format=Invoice | Refund))  # R: Any | exec_results.Invoice  # fmt: skip
either: Invoice | Refund = runtime.exec("Either", response_format=Invoice | Refund)
# A bad keyword or value is one error naming it (bad_keywords.py has more).
runtime.exec("Read it", response_format="Invoice")  # E: arg-type
runtime.exec("Say hello", max_iterations="many")  # E: arg-type
runtime.exec("Say hello", max_iteration=3)  # E: arg-type
wrong: int = runtime.exec("Say hello")  # E: assignment


@agentic_function
def summarize(text: str, runtime: Runtime) -> str:
    """Summarize; returning exec's answer passes --strict."""
    return runtime.exec(f"Summarize: {text}")


@agentic_function
def read_invoice(text: str, runtime: Runtime) -> Invoice:
    """Extract an invoice."""
    return runtime.exec(text, response_format=Invoice)


async def async_uses(runtime: Runtime) -> str:
    reveal_type(await runtime.async_exec("Say hello"))  # R: str
    invoice = await runtime.async_exec("Read it", response_format=Invoice)
    reveal_type(invoice)  # R: exec_results.Invoice
    reveal_type(await runtime.async_exec("List", response_format=list[Point]))  # R: list[exec_results.Point]  # fmt: skip
    return await runtime.async_exec("Say hello")
