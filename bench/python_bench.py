#!/usr/bin/env python3
"""Times ewise from Python against PyTorch on the same tensors, in one run:

  * host overhead: one small call, a (64, 64) + (64,) float32 add (broadcast), timed on the
    host (time.perf_counter) over --calls calls (default 10,000) after 200 warm-up calls;
    per call: ewise.add(a, b) and ewise.add(a, b, out=c) through each route the package
    has for plain torch tensors ("libtorch": ewise._ewise_torch, built against libtorch;
    "python-api": ewise._ewise.torch_binary; ewise.routes() names the one ewise takes,
    torch_route.use switches),
    ewise.torch.add(a, b) (the torch.library operator), torch.add(a, b) and
    torch.add(a, b, out=c). On the GPU the loop only queues kernels (the stream is
    synchronized once at the end, so the figure is the host's cost per call while the GPU
    keeps up); on the CPU it includes the computation. The second column times the same
    calls in batches of --batch (default 200) with a synchronization between batches, outside
    the timed part (the host's cost with an idle queue);
  * throughput: an embedding table's sparse gradient into the table (2^20 x 64 float32,
    262,144 log-uniform ids; ewise.sparse.accumulate against table.add_(grad), uncoalesced and
    coalesced; two such gradients added, ewise.sparse.add against (g1 + g2).coalesce()), a large dense broadcast add ((8192, 8192) + (8192,) float32), COO ⊙ dense and
    COO + COO (canonical 16384 x 16384 matrices at 1% density, float32, as coalesced
    torch.sparse_coo tensors; PyTorch's sparse * dense and (A + B) on the same tensors), as
    the median of --runs samples, each timed with CUDA events (time.perf_counter on the CPU),
    GB/s counting each operand read once and the result written once.

Runs on CUDA when torch sees a GPU, else on the CPU (smaller sizes: --cpu-scale; the CPU
backend is ewise's reference, not tuned for speed), and prints a table. Needs torch and the
ewise package (PYTHONPATH=build/python after building target _ewise).

    python3 bench/python_bench.py [--calls 10000] [--batch 200] [--host-only] [--runs 20]
                                  [--device cuda|cpu]
"""
import argparse
import statistics
import sys
import time

import ewise
import torch_route

try:
    import torch
except ImportError:
    sys.exit("python_bench.py needs torch (python3 -m pip install torch)")


def host_overhead(fn, calls, sync):
    """Seconds per call of fn() over `calls` calls, after a warm-up, on the host's clock."""
    for _ in range(200):
        fn()
    sync()
    start = time.perf_counter()
    for _ in range(calls):
        fn()
    sync()
    return (time.perf_counter() - start) / calls


def host_overhead_batched(fn, calls, batch, sync):
    """Seconds per call of fn() over `calls` calls made in batches of `batch`, each batch timed
    from an idle queue (synchronized before it, outside the timing)."""
    for _ in range(200):
        fn()
    total, done = 0.0, 0
    while done < calls:
        n = min(batch, calls - done)
        sync()
        start = time.perf_counter()
        for _ in range(n):
            fn()
        total += time.perf_counter() - start
        done += n
    sync()
    return total / calls


def throughput(fn, runs, device):
    """Median seconds of fn() over `runs` samples (CUDA events on the GPU)."""
    for _ in range(3):
        fn()
    samples = []
    for _ in range(runs):
        if device == "cuda":
            begin, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(
                enable_timing=True)
            begin.record()
            fn()
            end.record()
            end.synchronize()
            samples.append(begin.elapsed_time(end) / 1e3)
        else:
            start = time.perf_counter()
            fn()
            samples.append(time.perf_counter() - start)
    return statistics.median(samples)


def random_coo(n, density, device, generator):
    """A coalesced n x n float32 torch.sparse_coo tensor, every cell stored with `density`."""
    nnz = int(n * n * density)
    keys = torch.unique(torch.randint(0, n * n, (nnz,), generator=generator))
    indices = torch.stack((keys // n, keys % n))
    vals = torch.rand(keys.numel(), generator=generator) * 8 - 4
    return torch.sparse_coo_tensor(indices, vals, (n, n), is_coalesced=True,
                                   check_invariants=False).to(device)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=10_000)
    parser.add_argument("--batch", type=int, default=200)
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--device", choices=("cuda", "cpu"),
                        default="cuda" if torch.cuda.is_available() else "cpu")
    parser.add_argument("--host-only", action="store_true",
                        help="time the host overhead only, not the throughput cases")
    parser.add_argument("--cpu-scale", type=int, default=8,
                        help="on the CPU, divide the throughput cases' extents by this")
    args = parser.parse_args()
    device = args.device
    sync = torch.cuda.synchronize if device == "cuda" else (lambda: None)
    g = torch.Generator().manual_seed(1)
    print(f"device: {torch.cuda.get_device_name() if device == 'cuda' else 'cpu'}, "
          f"torch {torch.__version__}, ewise GPU: {ewise.gpu_available()}")

    default = ewise.routes()["torch"]
    paths = ["python-api"]
    try:
        torch_route.use("libtorch")
        paths.insert(0, "libtorch")
    except ImportError as e:
        print(f"libtorch route unavailable: {e}")
    print(f"torch route taken: {default}")

    a = torch.randn(64, 64, generator=g).to(device)
    b = torch.randn(64, generator=g).to(device)
    c = torch.empty_like(a)
    rows = []
    for path in paths:
        torch_route.use(path)
        assert torch.equal(ewise.add(a, b), torch.add(a, b))
        assert ewise.add(a, b, out=c) is c and torch.equal(c, torch.add(a, b))
        rows += [(f"ewise.add(a, b) [{path}]", path, lambda: ewise.add(a, b)),
                 (f"ewise.add(a, b, out=c) [{path}]", path, lambda: ewise.add(a, b, out=c))]
    rows += [("ewise.torch.add(a, b)", default, lambda: ewise.torch.add(a, b)),
             ("torch.add(a, b)", default, lambda: torch.add(a, b)),
             ("torch.add(a, b, out=c)", default, lambda: torch.add(a, b, out=c))]
    print(f"\nhost overhead: (64, 64) + (64,) float32, {args.calls} calls")
    print(f"| call | us/call | us/call (batches of {args.batch}) |\n| --- | ---: | ---: |")
    for name, path, fn in rows:
        torch_route.use(path)
        flat = host_overhead(fn, args.calls, sync)
        batched = host_overhead_batched(fn, args.calls, args.batch, sync)
        print(f"| {name} | {flat * 1e6:.2f} | {batched * 1e6:.2f} |")

    if args.host_only:
        return
    scale = 1 if device == "cuda" else args.cpu_scale
    n, sn = 8192 // scale, 16384 // scale
    x = torch.randn(n, n, generator=g).to(device)
    bias = torch.randn(n, generator=g).to(device)
    out = torch.empty_like(x)
    assert torch.equal(ewise.add(x, bias, out=out), x + bias)
    sa, sb = random_coo(sn, 0.01, device, g), random_coo(sn, 0.01, device, g)
    dense = torch.randn(sn, sn, generator=g).to(device)
    assert torch.equal(ewise.sparse.multiply(sa, dense).to_dense(), (sa * dense).to_dense())
    assert torch.equal(ewise.sparse.add(sa, sb).to_dense(), (sa + sb).to_dense())
    nnz_a, nnz_b = sa._nnz(), sb._nnz()
    # bytes: a COO entry is 2 int64 indices + 1 float32 value (20 bytes)
    dense_bytes = 4 * (2 * n * n + n)
    mul_bytes = 20 * nnz_a * 2 + 4 * nnz_a  # a read, a's pattern written, dense gathered
    union = ewise.sparse.add(sa, sb)._nnz()
    add_bytes = 20 * (nnz_a + nnz_b + union)
    # An embedding table's sparse gradient (PyTorch's hybrid sparse_coo: one sparse dimension,
    # rows of 64): 262,144 ids over 2^20 rows, log-uniform (Zipf-like: a few hot ids stored
    # thousands of times) and scattered over the table; uncoalesced as backward makes it, and
    # coalesced. Bytes: the values and ids read once, each distinct row of the table read and
    # written once.
    rows_n, width, ids_n = 2**20 // scale, 64, 262_144 // scale
    hot = torch.exp(torch.rand(ids_n, generator=g) * torch.log(torch.tensor(float(rows_n))))
    ids = torch.randperm(rows_n, generator=g)[(hot.long() - 1).clamp(0, rows_n - 1)]
    grad = torch.sparse_coo_tensor(ids[None], torch.randn(ids_n, width, generator=g),
                                   (rows_n, width)).to(device)
    coalesced = grad.coalesce()
    table = torch.zeros(rows_n, width).to(device)
    check = table.clone()
    ewise.sparse.accumulate("add", check, grad)
    # PyTorch sums a hot id's thousands of rows in another order: within rounding.
    torch.testing.assert_close(check, table.clone().add_(grad), rtol=1e-4, atol=1e-3)
    distinct = coalesced._nnz()
    grad_bytes = 4 * ids_n * width + 8 * ids_n + 2 * 4 * distinct * width
    coalesced_bytes = 4 * distinct * width + 8 * distinct + 2 * 4 * distinct * width
    # A second micro-batch's gradient (the same distribution) added to the first: gradient
    # accumulation, a coalesced hybrid tensor. Bytes: both gradients read, the union written.
    ids2 = torch.randperm(rows_n, generator=g)[(hot[torch.randperm(ids_n, generator=g)].long()
                                                - 1).clamp(0, rows_n - 1)]
    grad2 = torch.sparse_coo_tensor(ids2[None], torch.randn(ids_n, width, generator=g),
                                    (rows_n, width)).to(device)
    both = ewise.sparse.add(grad, grad2)
    assert torch.equal(both._indices(), (grad + grad2).coalesce()._indices())
    union_bytes = 2 * (4 * ids_n * width + 8 * ids_n) + both._nnz() * (4 * width + 8)
    cases = [
        (f"embedding grad {rows_n}x{width}, {ids_n} ids ({distinct} distinct) into table",
         grad_bytes, lambda: ewise.sparse.accumulate("add", table, grad),
         lambda: table.add_(grad)),
        ("the same, coalesced", coalesced_bytes,
         lambda: ewise.sparse.accumulate("add", table, coalesced),
         lambda: table.add_(coalesced)),
        (f"two such gradients added ({both._nnz()} rows), coalesced", union_bytes,
         lambda: ewise.sparse.add(grad, grad2), lambda: (grad + grad2).coalesce()),
        (f"dense ({n}, {n}) + ({n},)", dense_bytes,
         lambda: ewise.add(x, bias, out=out), lambda: torch.add(x, bias, out=out)),
        (f"COO * dense {sn}^2, nnz {nnz_a}", mul_bytes,
         lambda: ewise.sparse.multiply(sa, dense), lambda: sa * dense),
        (f"COO + COO {sn}^2, nnz {nnz_a} + {nnz_b}", add_bytes,
         lambda: ewise.sparse.add(sa, sb), lambda: (sa + sb).coalesce()),
    ]
    print(f"\nthroughput ({'CUDA events' if device == 'cuda' else 'host clock'}, "
          f"median of {args.runs})")
    print("| case | ewise ms | ewise GB/s | torch ms | torch GB/s |\n| --- | ---: | ---: | ---: "
          "| ---: |")
    for name, nbytes, ours, theirs in cases:
        t_ours, t_theirs = throughput(ours, args.runs, device), throughput(theirs, args.runs,
                                                                           device)
        print(f"| {name} | {t_ours * 1e3:.3f} | {nbytes / t_ours / 1e9:.1f} | "
              f"{t_theirs * 1e3:.3f} | {nbytes / t_theirs / 1e9:.1f} |")


if __name__ == "__main__":
    main()
