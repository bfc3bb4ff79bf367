"""Timing of peer calls for bench/peers.py, as ewise_bench times its own: the median of
samples timed with one library's CUDA events, in both call patterns (back to back and
synchronizing), and the host time per call of the small suite."""
import math
import time


SYNC_BUDGET_MS = 1000  # the synchronizing pattern times `runs` calls unless that takes longer,
MIN_SYNC_RUNS = 5      # and then no fewer than this (as ewise_bench's harness)


def median(t):
    t = sorted(t)
    n = len(t)
    return t[n // 2] if n % 2 else 0.5 * (t[n // 2 - 1] + t[n // 2])


class Timer:
    """Median-of-samples timing with one library's CUDA events, in both call patterns: back to
    back (GPU time per call from events, median of samples; host wall time per call around all
    samples' calls with one synchronization at the end) and synchronizing (each call followed
    by a synchronization of the current stream: host wall and GPU time per call, medians)."""

    def __init__(self, event_cls, sync, runs, stream_sync=None):
        self.event_cls, self.sync, self.runs = event_cls, sync, max(runs, 20)
        self.stream_sync = stream_sync or sync

    def _elapsed(self, fn, count, start_i):
        e0, e1 = self.event_cls(), self.event_cls()
        e0.record()
        for j in range(count):
            fn(start_i + j)
        e1.record()
        e1.synchronize()
        return self._ms(e0, e1)

    def __call__(self, fn, sync_pattern=True):
        # warm-up: 3 calls, the last timed; calls under 100 us are re-estimated over 5
        fn(0)
        fn(1)
        self.sync()
        i = 2
        est = self._elapsed(fn, 1, i)
        i += 1
        if est < 0.1:
            est = max(self._elapsed(fn, 5, i) / 5, 1e-4)
            i += 5
        batch = int(min(max(math.ceil(0.1 / est), 1), 4096))
        pairs = []
        w0 = time.perf_counter()
        for _ in range(self.runs):
            e0, e1 = self.event_cls(), self.event_cls()
            e0.record()
            for _ in range(batch):
                fn(i)
                i += 1
            e1.record()
            pairs.append((e0, e1))
        self.sync()
        wall = (time.perf_counter() - w0) * 1e3 / (self.runs * batch)
        t = sorted(self._ms(a, b) / batch for a, b in pairs)
        out = {"median_ms": median(t), "min_ms": t[0], "max_ms": t[-1], "runs": len(t),
               "batch": batch, "wall_ms": wall}
        if sync_pattern:
            n = int(min(max(SYNC_BUDGET_MS // max(out["median_ms"], 1e-4), MIN_SYNC_RUNS),
                        self.runs))
            e0, e1 = self.event_cls(), self.event_cls()
            gpu, wall = [], []
            for _ in range(n):
                e0.record()
                t0 = time.perf_counter()
                fn(i)
                i += 1
                e1.record()
                self.stream_sync()
                wall.append((time.perf_counter() - t0) * 1e3)
                gpu.append(self._ms(e0, e1))
            out.update(sync_gpu_ms=median(gpu), sync_wall_ms=median(wall), sync_runs=n)
        return out


class TorchTimer(Timer):
    def __init__(self, torch, runs):
        super().__init__(lambda: torch.cuda.Event(enable_timing=True), torch.cuda.synchronize, runs,
                         lambda: torch.cuda.current_stream().synchronize())

    @staticmethod
    def _ms(a, b):
        return a.elapsed_time(b)


class CupyTimer(Timer):
    def __init__(self, cp, runs):
        self.cp = cp
        super().__init__(cp.cuda.Event, cp.cuda.Device().synchronize, runs,
                         lambda: cp.cuda.get_current_stream().synchronize())

    def _ms(self, a, b):
        return self.cp.cuda.get_elapsed_time(a, b)


def sets_for(footprint, l2_bytes):
    target = 3 * l2_bytes
    if footprint >= target:
        return 1
    return int(min(math.ceil(target / max(footprint, 1)), 4096))


HOST_CALLS = 20000  # as ewise's small suite


def host_us_per_call(call, synchronize):
    """What the calling thread spends on one call, microseconds: a CPU clock around HOST_CALLS
    back-to-back calls, synchronized before and after but not inside (as ewise's small suite)."""
    call()
    synchronize()
    t0 = time.perf_counter()
    for _ in range(HOST_CALLS):
        call()
    took = time.perf_counter() - t0
    synchronize()
    return took * 1e6 / HOST_CALLS
