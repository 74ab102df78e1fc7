"""``openprogram tools``: what a policy offers, and which layer hides the rest.

The tools come from the default registry after importing every ``--module``
(their decorators register into it), or from the ``Registry`` that
``--registry module:attr`` names; a module that registers nothing in the
default registry is looked into for a registry or tools of its own (see
``_tools_source``). ``--entry-points`` adds installed ones.

The policy comes from separate flags (``--toolset files --deny rm,mv``) or one
``--policy`` value in the same words, ``key=value`` pairs separated by commas,
several names joined by ``+``: ``--policy toolset=files,deny=rm+mv,source=telegram``.
Keys: ``toolset``, ``source``, ``allow``, ``deny``, ``disabled``. Giving one key
both ways is an error rather than a silent override.

``--json`` output (stable; keys are only ever added)::

    {"policy": {"toolset": ..., "source": ..., "allow": [...] | null, "deny": [...], "disabled": [...]},
     "offered":  [{"name": ..., "kind": "function" | "agentic", "summary": ...}, ...],
     "deferred": [{"name": ..., "kind": ..., "summary": ...}, ...],
     "rejected": [{"name": ..., "layer": ..., "reason": ...}, ...],
     "registry": "default" | "module:attr" | "tools of <module>", "notes": [...]}

each list in registration order; with ``--explain NAME``:
``{"name": ..., "offered": bool, "rejection": {"layer": ..., "reason": ...} | null,
"registry": ..., "notes": [...]}``.
"""  # noqa: E501 - the JSON shape reads best on one line

from __future__ import annotations

import argparse
import sys
from typing import Any

from openprogram.cli._command import Command
from openprogram.cli._suggest import did_you_mean
from openprogram.cli._tools_source import ToolSource, find_tools
from openprogram.exceptions import ConfigurationError
from openprogram.gates import Policy, explain, resolve
from openprogram.registry import Registry
from openprogram.tools import Tool

__all__ = [
    "POLICY_KEYS",
    "TOOLS",
    "add_policy_arguments",
    "add_registry_arguments",
    "parse_policy",
    "policy_from_args",
    "tool_source_from_args",
]

POLICY_KEYS = ("toolset", "source", "allow", "deny", "disabled")
"""The keys ``--policy`` accepts, each also a flag of its own."""

_NAME_LISTS = ("allow", "deny", "disabled")


def _arguments(p: argparse.ArgumentParser) -> None:
    """Declare the ``tools`` command's options on its sub-parser."""
    add_registry_arguments(p)
    add_policy_arguments(p)
    p.add_argument("--explain", metavar="NAME", help="say which layer hides NAME and why")


def add_registry_arguments(p: argparse.ArgumentParser) -> None:
    """Declare where the tools come from: ``--module``, ``--registry``, ``--entry-points``."""
    p.add_argument(
        "--module",
        action="append",
        default=[],
        metavar="M",
        help="import module M first, so its decorators register their tools (repeatable)",
    )
    p.add_argument(
        "--registry",
        metavar="MODULE:ATTR",
        help="use that Registry instead of the default one (e.g. examples.file_organizer:TOOLS)",
    )
    p.add_argument(
        "--entry-points", action="store_true", help="load 'openprogram.tools' entry points"
    )


def add_policy_arguments(p: argparse.ArgumentParser) -> None:
    """Declare the policy flags: ``--policy``, or ``--toolset``, ``--source``, ``--allow``, ..."""
    p.add_argument(
        "--policy",
        metavar="K=V,...",
        help="the whole policy in one value, e.g. toolset=files,deny=rm+mv (keys: "
        + ", ".join(POLICY_KEYS)
        + ")",
    )
    p.add_argument("--toolset", help='a toolset name, or "none"')
    p.add_argument("--source", help="the channel served (hides tools unsafe_in it)")
    p.add_argument("--allow", help="comma-separated names: only these may be offered")
    p.add_argument("--deny", help="comma-separated names never offered")
    p.add_argument("--disabled", help="comma-separated names switched off")


def tool_source_from_args(args: argparse.Namespace) -> ToolSource:
    """The tools the flags of ``add_registry_arguments`` describe (modules imported first).

    Raises:
        ConfigurationError: ``--registry`` names something that is not a ``Registry``, or
            the modules define several registries and ``--registry`` does not pick one.
        TargetNotFoundError: A module cannot be found.
        UserCodeError: A module raised while importing.
    """
    return find_tools(args.module, args.registry, entry_points=args.entry_points)


def parse_policy(text: str) -> dict[str, Any]:
    """``"toolset=files,deny=rm+mv"`` -> ``{"toolset": "files", "deny": ["rm", "mv"]}``.

    Raises:
        ConfigurationError: A pair has no ``=``, an unknown key, or a repeated key.
    """
    fields: dict[str, Any] = {}
    for pair in filter(None, (p.strip() for p in text.split(","))):
        key, sep, value = pair.partition("=")
        key = key.strip()
        if not sep or key not in POLICY_KEYS:
            raise ConfigurationError(
                f"--policy {text!r}: {pair!r} is not key=value with a key among "
                f"{', '.join(POLICY_KEYS)} (names joined by '+', e.g. deny=rm+mv)"
            )
        if key in fields:
            raise ConfigurationError(f"--policy {text!r}: {key!r} is given twice")
        value = value.strip()
        fields[key] = [n for n in value.split("+") if n] if key in _NAME_LISTS else value
    return fields


def policy_from_args(args: argparse.Namespace) -> Policy:
    """The ``Policy`` the flags of ``add_policy_arguments`` describe."""
    fields = parse_policy(args.policy) if args.policy else {}
    for key in POLICY_KEYS:
        flag = getattr(args, key)
        if flag is None:
            continue
        if key in fields:
            raise ConfigurationError(
                f"{key} is given both in --policy and as --{key}; keep one of them"
            )
        fields[key] = (
            [n.strip() for n in flag.split(",") if n.strip()] if key in _NAME_LISTS else flag
        )
    return Policy(**fields)


def _tools(args: argparse.Namespace) -> dict[str, Any]:
    """Run ``openprogram tools``; returns the ``--json`` object (printed by the caller)."""
    source = tool_source_from_args(args)
    policy = policy_from_args(args)
    if not args.json:
        for note in source.notes:
            print(f"note: {note}", file=sys.stderr)
    about = {"registry": source.label, "notes": list(source.notes)}
    if args.explain:
        return {**_explain(args.explain, policy, source, args.json), **about}
    res = resolve(source.registry, policy)
    summary = {
        "policy": _policy_json(policy),
        "offered": [_tool_json(t) for t in res.offered],
        "deferred": [_tool_json(t) for t in res.deferred],
        "rejected": [
            {"name": n, "layer": r.layer, "reason": r.reason} for n, r in res.rejected.items()
        ],
        **about,
    }
    if args.json:
        return summary
    print(f"offered ({len(res.offered)}):")
    for tool in res.offered:
        print(f"  {tool.one_liner}")
    print(f"deferred, loadable with tool_search ({len(res.deferred)}):")
    for tool in res.deferred:
        print(f"  {tool.one_liner}")
    print(f"hidden ({len(res.rejected)}):")
    for name, rej in res.rejected.items():
        print(f"  {name}: {rej.layer}: {rej.reason}")
    return summary


def _tool_json(tool: Tool) -> dict[str, str]:
    summary = tool.one_liner.removeprefix(f"{tool.name}: ") if tool.one_liner != tool.name else ""
    return {"name": tool.name, "kind": tool.kind, "summary": summary}


def _policy_json(policy: Policy) -> dict[str, Any]:
    return {
        "toolset": policy.toolset,
        "source": policy.source,
        "allow": None if policy.allow is None else sorted(policy.allow),
        "deny": sorted(policy.deny),
        "disabled": sorted(policy.disabled),
    }


def _explain(name: str, policy: Policy, source: ToolSource, as_json: bool) -> dict[str, Any]:
    registry: Registry = source.registry
    if name not in registry:
        known = registry.names()
        raise ConfigurationError(
            f"--explain {name!r}: no tool of that name is registered in {_described(source)}"
            f"{did_you_mean(name, known)} (known: {', '.join(known) or 'none'}); "
            "use --module to import the module that defines it, or --registry to name "
            "the Registry it is in"
        )
    rejection = explain(name, policy, registry)
    body = None if rejection is None else {"layer": rejection.layer, "reason": rejection.reason}
    if not as_json:
        verdict = "is offered under this policy" if rejection is None else "is hidden by "
        detail = "" if rejection is None else f"{rejection.layer}: {rejection.reason}"
        print(f"{name} {verdict}{detail}")
    return {"name": name, "offered": rejection is None, "rejection": body}


def _described(source: ToolSource) -> str:
    if source.label == "default":
        return "the default registry"
    if source.label.startswith("tools of "):
        return source.label
    return f"the registry {source.label}"


TOOLS = Command(
    name="tools",
    help="list what a policy offers, and why the rest is hidden",
    add_arguments=_arguments,
    run=_tools,
)
