"""``runtime.resume``: record a person's decisions about a paused run, then run it again.

The run's root exec runs again with the content and options its record holds
(tools found by name in the runtime's registry, unless ``tools=`` gives them),
and its journal replays everything up to the calls it waited on: an approved
call runs once (the hook is not asked again), a denied one gets an error
result with the reason, an undecided one waits again (``RunPaused``). A
decision names a pending call by its call id (or its path, when call ids
repeat) and is bound to the arguments that call showed.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from openprogram._pause import PendingCall
from openprogram.durable import call_print
from openprogram.exceptions import ConfigurationError, UserError
from openprogram.messages._json import decode_message
from openprogram.runtime._run_record import options_from_record
from openprogram.runtime._start import run_exec
from openprogram.stores import Decision, RunStore, StoredRun

if TYPE_CHECKING:
    from openprogram.runtime._runtime import Runtime

__all__ = ["decisions_for", "resume_run"]


async def resume_run(
    runtime: Runtime,
    run_id: str,
    *,
    approve: Iterable[str] = (),
    deny: Mapping[str, str] | None = None,
    tools: Sequence[Any] | None = None,
) -> Any:
    """Record the decisions and run ``run_id``'s root exec again (see the module docstring).

    Raises:
        ConfigurationError: The runtime has no store that keeps runs.
        UserError: No such run, a decision naming no pending call, or a record that
            cannot be run again from here (the message says what to do instead).
        RunPaused: Calls still wait (undecided ones, or new ones).
    """
    store = runtime.store
    if not isinstance(store, RunStore):
        raise ConfigurationError(
            f"resume({run_id!r}) needs the store the run was journaled in: pass "
            "Runtime(store=SQLiteStore(path)) with the same path"
        )
    _check_decisions(approve, deny)
    stored = await store.load_run(run_id)
    if stored is None:
        raise UserError(f"resume({run_id!r}): the store holds no run {run_id!r}")
    decisions = _decisions(stored, list(approve), dict(deny or {}))
    if decisions:
        await store.record_decisions(run_id, decisions)
    options = options_from_record(stored.record.options, run_id, tools)
    if tools is None and options.tools is not None:
        options = dataclasses.replace(options, tools=_registered(runtime, options.tools, run_id))
    content = decode_message(json.loads(stored.record.content), f"the content of run {run_id!r}")
    return await run_exec(runtime, content, options, ())


def decisions_for(
    stored: StoredRun, approve: Iterable[str], deny: Mapping[str, str] | None
) -> list[Decision]:
    """The decisions ``approve`` and ``deny`` make about ``stored``'s waiting calls.

    Raises:
        UserError: Not a list and a dict, or a decision naming no waiting call.
    """
    _check_decisions(approve, deny)
    return _decisions(stored, list(approve), dict(deny or {}))


def _check_decisions(approve: Iterable[str], deny: Mapping[str, str] | None) -> None:
    if isinstance(approve, str) or (deny is not None and not isinstance(deny, Mapping)):
        raise UserError(
            "resume(approve=[call ids], deny={call id: reason}): approve is a list of call ids "
            "(or paths), deny a dict from call id to the reason the model is told"
        )


def _decisions(stored: StoredRun, approve: list[str], deny: dict[str, str]) -> list[Decision]:
    run_id = stored.record.run_id
    both = set(approve) & set(deny)
    if both:
        raise UserError(f"resume({run_id!r}): {sorted(both)} both approved and denied; pick one")
    decided = [
        (d.path, PendingCall(call_id=d.call_id, path=d.path, tool_name="", arguments={}))
        for d in stored.decisions
    ]
    known = [(p.path, p) for p in stored.record.pending] + decided
    out: list[Decision] = []
    for name, approved, reason in [(a, True, None) for a in approve] + [
        (d, False, r) for d, r in deny.items()
    ]:
        call = _named(run_id, name, known, stored.record.pending)
        if call is None:
            continue  # decided before: the decision stands (a resume run again after a crash)
        if not approved and not (isinstance(reason, str) and reason):
            raise UserError(f"resume({run_id!r}): deny[{name!r}] must be the reason (a string)")
        out.append(
            Decision(
                path=call.path,
                call_id=call.call_id,
                approved=approved,
                reason=reason,
                arguments_hash=call_print(call.tool_name, call.arguments),
            )
        )
    return out


def _named(
    run_id: str,
    name: str,
    known: list[tuple[str, PendingCall]],
    pending: Sequence[PendingCall],
) -> PendingCall | None:
    """The pending call ``name`` names (``None``: one decided before and no longer pending)."""
    by_id = [p for _, p in known if p.call_id == name]
    found = by_id or [p for path, p in known if path == name]
    paths = {p.path for p in found}
    if not found:
        waiting = ", ".join(f"{p.call_id} ({p.tool_name} at {p.path})" for p in pending)
        raise UserError(
            f"resume({run_id!r}): {name!r} is not a call the run waits on; it waits on: "
            f"{waiting or 'nothing'}"
        )
    if len(paths) > 1:
        raise UserError(
            f"resume({run_id!r}): call id {name!r} names several waiting calls (at "
            f"{', '.join(sorted(paths))}); name one by its path instead"
        )
    return next((p for p in pending if p.path in paths), None)


def _registered(runtime: Runtime, names: Sequence[Any], run_id: str) -> list[Any]:
    tools: list[Any] = []
    missing: list[Any] = []
    for name in names:
        tool = runtime.registry.get(name) if isinstance(name, str) else None
        if tool is None:
            missing.append(name)
        else:
            tools.append(tool)
    if missing:
        raise UserError(
            f"resume({run_id!r}): the run's exec was given tools {missing} that are not in the "
            "runtime's registry; import the module that defines them, or pass them again "
            "with resume(..., tools=[...])"
        )
    return tools
