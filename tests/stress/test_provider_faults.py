"""Random fault sequences on the loopback wire, through ``Runtime.exec``, for every provider.

Each example scripts what the server answers to successive attempts of one
model call (429, 5xx, 529, 400, a stall past the read timeout, a stream cut
before or after content, an empty or garbage body, or a good reply). The exec
must end exactly as the retry rules say (the ``_faults.expected`` oracle):
success at the first good reply, ``LLMError`` at the first final fault or when
``max_retries + 1`` attempts are spent, never more attempts than that, with
``LLMError.attempts`` matching what the server saw; and a tight ``timeout_s``
bounds it all. Figures (attempt and time distributions over thousands of
sequences) come from ``bench/reliability/faults.py``.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from providers._server import WireServer

from ._faults import FAULTS, KINDS, RETRYABLE, expected, run_sequence, violations

pytestmark = pytest.mark.model_requests  # loopback wire servers: real requests on purpose


@pytest.fixture(scope="module")
def server() -> Iterator[WireServer]:
    with WireServer() as wire:
        yield wire


sequences = st.lists(st.sampled_from(FAULTS), min_size=1, max_size=6).map(
    lambda faults: [*faults, "ok"]  # the script never runs dry: it ends in a good reply
)


@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(kind=st.sampled_from(KINDS), faults=sequences, max_retries=st.integers(0, 4))
@example(kind="openai", faults=["500", "cut_after", "ok"], max_retries=2)  # retried, then cut
def test_every_exec_ends_as_the_retry_rules_say(
    server: WireServer, kind: str, faults: list[str], max_retries: int
) -> None:
    outcome = run_sequence(kind, faults, max_retries=max_retries, timeout_s=10, wire=server)
    assert violations(outcome, max_retries=max_retries, timeout_s=10, slack_s=1.0) == []
    want = expected(faults, max_retries)
    assert (outcome.result == "ok", outcome.attempts) == (want.ok, want.attempts), outcome
    if not want.ok:
        assert outcome.result.startswith("LLMError:")


@settings(
    max_examples=15,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(
    kind=st.sampled_from(KINDS),
    faults=st.lists(st.sampled_from(RETRYABLE), min_size=6, max_size=6),
    timeout_s=st.sampled_from([0.2, 0.35, 0.5]),
)
def test_timeout_s_bounds_an_exec_whatever_the_faults(
    server: WireServer, kind: str, faults: list[str], timeout_s: float
) -> None:
    # Only retryable faults and plenty of retries: the deadline is what ends it.
    outcome = run_sequence(kind, [*faults, "ok"], max_retries=10, timeout_s=timeout_s, wire=server)
    assert violations(outcome, max_retries=10, timeout_s=timeout_s, slack_s=0.25) == []
