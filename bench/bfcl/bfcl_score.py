"""Score decoded answers with BFCL's own checker (``bfcl_eval.eval_checker``).

Tool categories go through ``ast_checker`` (Python rules); irrelevance uses
BFCL's relevance rule: the answer is correct when ``is_empty_output`` says it
holds no call. A request that failed (``LLMError``, HTTP error) is scored
wrong in every category and counted separately.

``ast_checker`` imports ``bfcl_eval.constants.model_config``, which imports
every model handler and with them a dozen vendor SDKs. The checker reads
only one fact from it: whether the model's function names had their dots
turned into underscores. So before importing the checker we register a
one-entry stand-in for that module (our names: dots → underscores, as in
``bfcl_schema.tool_name``); the checking code itself is BFCL's, unchanged.
"""

from __future__ import annotations

import sys
import types
from dataclasses import dataclass
from typing import Any

__all__ = ["CHECKER_MODEL", "Verdict", "checker_available", "score"]

CHECKER_MODEL = "openprogram-bench"
"""The model name given to the checker (its config entry is ours)."""


@dataclass(frozen=True, slots=True)
class Verdict:
    valid: bool
    error: str = ""


@dataclass(frozen=True, slots=True)
class _ModelConfig:
    underscore_to_dot: bool


def _install_model_config() -> None:
    name = "bfcl_eval.constants.model_config"
    if name in sys.modules:
        existing = sys.modules[name]
        getattr(existing, "MODEL_CONFIG_MAPPING", {}).setdefault(
            CHECKER_MODEL, _ModelConfig(underscore_to_dot=True)
        )
        return
    module = types.ModuleType(name)
    module.MODEL_CONFIG_MAPPING = {  # type: ignore[attr-defined]
        CHECKER_MODEL: _ModelConfig(underscore_to_dot=True)
    }
    sys.modules[name] = module


def checker_available() -> bool:
    """Whether bfcl-eval's checker imports in this interpreter."""
    try:
        _checker()
    except ImportError:
        return False
    return True


def _checker() -> tuple[Any, Any, Any]:
    _install_model_config()
    from bfcl_eval.constants.enums import Language
    from bfcl_eval.eval_checker.ast_eval.ast_checker import ast_checker
    from bfcl_eval.utils import is_empty_output, is_function_calling_format_output

    return ast_checker, Language.PYTHON, (is_empty_output, is_function_calling_format_output)


def score(
    category: str,
    functions: list[dict[str, Any]],
    ground_truth: list[dict[str, Any]] | None,
    answer: list[dict[str, dict[str, Any]]] | None,
) -> Verdict:
    """BFCL's verdict on one decoded answer (``None``: the request failed)."""
    if answer is None:
        return Verdict(False, "request failed")
    ast_checker, python, (is_empty, is_call_format) = _checker()
    if ground_truth is None:  # irrelevance: no call is the right answer
        empty = bool(is_empty(answer))
        return Verdict(empty, "" if empty else "made a call where none fits")
    if not is_call_format(answer):
        return Verdict(False, "not in function-calling format")
    result = ast_checker(functions, answer, ground_truth, python, category, CHECKER_MODEL)
    errors = result.get("error") or []
    return Verdict(bool(result["valid"]), "; ".join(str(e) for e in errors))
