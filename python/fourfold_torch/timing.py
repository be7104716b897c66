"""Op time as fourfold's check takes it (op_timer.cpp, check_runner.cpp): per repeat one warm-up call that
sizes a batch of >= 1 ms, then one timed batch; the device is synchronized before and after each batch, so
an asynchronous device is timed on its work, not on the launch."""

import math
import time

from .device import synchronize

MIN_SAMPLE_SECONDS = 1e-3
MAX_CALLS_PER_SAMPLE = 1 << 20


class Rotation:
    """Calls that rotate over input sets, so each call finds its inputs in memory, not in the caches."""

    def __init__(self, calls):
        self.calls, self.next = calls, 0

    def __call__(self):
        self.calls[self.next]()
        self.next = (self.next + 1) % len(self.calls)


def time_sample(call, device):
    """One warm-up call, then one batch; returns (µs per call, calls in the batch)."""
    synchronize(device)
    start = time.perf_counter()
    call()
    synchronize(device)
    fastest = time.perf_counter() - start
    calls = int(min(max(math.ceil(MIN_SAMPLE_SECONDS / max(fastest, 1e-9)), 1), MAX_CALLS_PER_SAMPLE))
    synchronize(device)
    start = time.perf_counter()
    for _ in range(calls):
        call()
    synchronize(device)
    return (time.perf_counter() - start) * 1e6 / calls, calls


def percentile(samples, p):
    """numpy.percentile's default (linear between closest ranks), as fourfold's statistics.h."""
    xs = sorted(samples)
    h = p / 100.0 * (len(xs) - 1)
    lo = math.floor(h)
    hi = min(lo + 1, len(xs) - 1)
    return xs[lo] + (h - lo) * (xs[hi] - xs[lo])
