"""A few thousand loop iterations leave no growing memory behind.

The full soak (10,000 iterations, with per-iteration time) is
``python bench/reliability/soak.py``; here 3,000 iterations in blocks of 500
must keep Python memory (``tracemalloc``) flat once warm: after the first
block, no block may hold more than 256 KB more than the second one did, and
the number of objects the garbage collector tracks stays put.
"""

from __future__ import annotations

from ._soak import soak


def test_memory_stays_flat_over_thousands_of_loop_iterations() -> None:
    blocks = soak(3_000, 500, trace=True)
    warm = blocks[1]
    assert warm.traced_bytes is not None
    for later in blocks[2:]:
        assert later.traced_bytes is not None
        assert later.traced_bytes - warm.traced_bytes < 256 * 1024, blocks
        assert later.gc_objects - warm.gc_objects < 500, blocks
