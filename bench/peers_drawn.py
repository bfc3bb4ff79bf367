"""The cases of bench/peers.py whose inputs are drawn again rather than read from ewise_bench's
.npy files (the dense suites, the sparse and crossover suites): PyTorch and CuPy on the shapes,
dtypes and densities that ewise's JSON names."""
import math

from peers_inputs import INPUT_SUITES
from peers_timing import host_us_per_call, sets_for


def dense_key(r):
    p = r["params"]
    return ("dense", r["suite"], r["name"], r["dtype"], p["op"], tuple(p["a_shape"]),
            tuple(p["b_shape"]), bool(p["a_transposed"]), int(p.get("offset", 0)))


def sparse_key(r):
    p = r["params"]  # no suite: the crossover suite repeats some of the sparse suite's cases
    return ("sparse", p["op"], p["rows"], p["cols"], p["density"], p["input"],
            p.get("dense", ""), r["dtype"])


def collect_cases(ewise):
    """One entry per distinct case: its key, a label and ewise's automatic time."""
    dense, sparse = {}, {}
    for r in ewise["results"]:
        if r["status"] != "ok":
            continue
        p = r["params"]
        if r["suite"] in INPUT_SUITES:  # their own path: input_peers
            continue
        if r["suite"] in ("patterns", "ml_shapes", "small", "schedules", "crossover") and "a_shape" in p:
            if r["impl"] != "automatic" or (r["suite"] == "schedules" and p.get("nt", 0) != 0):
                continue
            dense[dense_key(r)] = {"ewise_ms": r["median_ms"], "record": r}
        elif (p.get("op") == "coo*coo" and r["impl"] == "automatic") or p.get("op") == "coo*dense":
            sparse.setdefault(sparse_key(r), {"ewise_ms": r["median_ms"], "record": r})
    return dense, sparse


# ---------------------------------------------------------------------------------------------
# dense peers


def torch_dtype(torch, name):
    return {"f16": torch.float16, "bf16": torch.bfloat16, "f32": torch.float32,
            "f64": torch.float64}[name]


def rand_uniform_torch(torch, shape, dtype):
    x = torch.rand(shape, device="cuda", dtype=torch.float32) * 8 - 4
    x = torch.where(x.abs() < 0.0625, torch.full_like(x, 0.5), x)
    return x.to(dtype)


def shifted(make, shape, offset):
    """A tensor of `shape` made by `make` that starts `offset` elements into its allocation."""
    if not offset:
        return make(tuple(shape))
    return make((math.prod(shape) + offset,))[offset:].reshape(tuple(shape))


def dense_operands(shape_a, shape_b, transposed, make, offset=0):
    """(a, b) made by `make`, a a transposed view of a contiguous tensor when asked, a starting
    `offset` elements into its allocation."""
    if transposed:
        a = make((shape_a[1], shape_a[0])).T
    else:
        a = shifted(make, shape_a, offset)
    b = make(tuple(shape_b))
    return a, b


# ewise_bench records an operation by its NumPy name (multiply, subtract) or its short alias.
SHORT_NAMES = {"multiply": "mul", "subtract": "sub"}


def run_dense_torch(torch, timer, key, l2):
    _, suite, name, dt, op, sa, sb, tr, off = key
    dtype = torch_dtype(torch, dt)
    make = lambda s: rand_uniform_torch(torch, s, dtype)
    out_shape = torch.broadcast_shapes(sa, sb)
    elem = torch.empty((), dtype=dtype).element_size()
    numel = lambda s: math.prod(s) if len(s) else 1
    footprint = (numel(sa) + numel(sb) + numel(out_shape)) * elem
    empty = lambda s: torch.empty(s, device="cuda", dtype=dtype)
    sets = [(*dense_operands(sa, sb, tr, make, off), shifted(empty, out_shape, off))
            for _ in range(sets_for(footprint, l2))]
    fn = {"add": torch.add, "sub": torch.sub, "mul": torch.mul}[SHORT_NAMES.get(op, op)]
    a, b, c = sets[0]
    fn(a, b, out=c)
    note = None
    if numel(out_shape) <= (1 << 26):  # a sanity check of the peer, where it is cheap
        ref = fn(a.double(), b.double())
        note = f"max rel err {((c.double() - ref).abs().max() / ref.abs().max()).item():.1e} vs f64"
        del ref
    st = timer(lambda i: fn(*sets[i % len(sets)][:2], out=sets[i % len(sets)][2]))
    st["note"] = note
    st["sets"] = len(sets)
    if suite == "small":
        st["host_us_per_call"] = host_us_per_call(lambda: fn(a, b, out=c), torch.cuda.synchronize)
    return st



def run_dense_cupy(cp, timer, key, l2):
    _, suite, name, dt, op, sa, sb, tr, off = key
    if dt == "bf16":
        return {"skipped": "CuPy has no bfloat16"}
    dtype = {"f16": cp.float16, "f32": cp.float32, "f64": cp.float64}[dt]

    def make(s):
        x = cp.random.uniform(-4, 4, size=s, dtype=cp.float32 if dt != "f64" else cp.float64)
        x = cp.where(cp.abs(x) < 0.0625, 0.5, x)
        return x.astype(dtype)

    out_shape = tuple(cp.broadcast_shapes(sa, sb)) if hasattr(cp, "broadcast_shapes") else \
        tuple(cp.broadcast(cp.empty(sa, dtype=cp.int8), cp.empty(sb, dtype=cp.int8)).shape)
    elem = cp.dtype(dtype).itemsize
    numel = lambda s: math.prod(s) if len(s) else 1
    footprint = (numel(sa) + numel(sb) + numel(out_shape)) * elem
    sets = [(*dense_operands(sa, sb, tr, make, off), shifted(lambda s: cp.empty(s, dtype=dtype), out_shape, off))
            for _ in range(sets_for(footprint, l2))]
    fn = {"add": cp.add, "sub": cp.subtract, "mul": cp.multiply}[SHORT_NAMES.get(op, op)]
    st = timer(lambda i: fn(*sets[i % len(sets)][:2], out=sets[i % len(sets)][2]))
    st["sets"] = len(sets)
    return st


# ---------------------------------------------------------------------------------------------
# sparse peers


def torch_random_coo(torch, rows, cols, density, unsorted, gen_chunk=1 << 27):
    """Every cell stored independently with probability `density`; int64 (2, nnz) indices."""
    total = rows * cols
    parts = []
    for start in range(0, total, gen_chunk):
        n = min(gen_chunk, total - start)
        parts.append(torch.nonzero(torch.rand(n, device="cuda") < density).flatten() + start)
    flat = torch.cat(parts)
    if unsorted:
        flat = flat[torch.randperm(flat.numel(), device="cuda")]
    idx = torch.stack([flat // cols, flat % cols])
    vals = torch.rand(flat.numel(), device="cuda") * 8 - 4
    vals = torch.where(vals.abs() < 0.0625, torch.full_like(vals, 0.5), vals)
    return idx, vals


def run_sparse(torch, cp, ttimer, ctimer, key):
    _, op, rows, cols, density, order, dense_pat, dt = key
    out = {}
    ia, va = torch_random_coo(torch, rows, cols, density, order == "unsorted")
    out["peer_nnz_a"] = int(va.numel())
    shape = (rows, cols)
    if op == "coo*coo":
        ib, vb = torch_random_coo(torch, rows, cols, density, order == "unsorted")
        out["peer_nnz_b"] = int(vb.numel())
        if order == "unsorted":
            # from raw indices: construction, coalescing (inside *) and product
            def raw(i):
                A = torch.sparse_coo_tensor(ia, va, shape, check_invariants=False)
                B = torch.sparse_coo_tensor(ib, vb, shape, check_invariants=False)
                return A * B
            c = raw(0)
            out["torch_raw"] = dict(ttimer(raw), output_nnz=int(c._nnz()),
                                    output_nonzero=int((c._values() != 0).sum().item()),
                                    output_coalesced=bool(c.is_coalesced()))
        else:
            A = torch.sparse_coo_tensor(ia, va, shape, check_invariants=False).coalesce()
            B = torch.sparse_coo_tensor(ib, vb, shape, check_invariants=False).coalesce()
            c = A * B
            out["torch_coalesced"] = dict(ttimer(lambda i: A * B), output_nnz=int(c._nnz()),
                                          output_nonzero=int((c._values() != 0).sum().item()),
                                          output_coalesced=bool(c.is_coalesced()))
        del c
        if cp is not None:
            import cupyx.scipy.sparse as cps
            ra, ca_, vA = (cp.asarray(ia[0].to(torch.int32)), cp.asarray(ia[1].to(torch.int32)),
                           cp.asarray(va))
            rb, cb, vB = (cp.asarray(ib[0].to(torch.int32)), cp.asarray(ib[1].to(torch.int32)),
                          cp.asarray(vb))
            torch.cuda.synchronize()
            if order == "unsorted":
                def from_coo(i):
                    A = cps.coo_matrix((vA, (ra, ca_)), shape=shape).tocsr()
                    B = cps.coo_matrix((vB, (rb, cb)), shape=shape).tocsr()
                    return A.multiply(B)
                c = from_coo(0)
                out["cupy_coo"] = dict(ctimer(from_coo), output_nnz=int(c.nnz),
                                       output_format=type(c).__name__)
            else:
                A = cps.coo_matrix((vA, (ra, ca_)), shape=shape).tocsr()
                B = cps.coo_matrix((vB, (rb, cb)), shape=shape).tocsr()
                c = A.multiply(B)
                out["cupy_csr"] = dict(ctimer(lambda i: A.multiply(B)), output_nnz=int(c.nnz),
                                       output_format=type(c).__name__)
    else:  # coo*dense
        dshape = {"full": (rows, cols), "row": (1, cols), "column": (rows, 1), "scalar": ()}[dense_pat]
        d = rand_uniform_torch(torch, dshape, torch.float32)
        A = torch.sparse_coo_tensor(ia, va, shape, check_invariants=False)
        if order == "canonical":
            A = A.coalesce()
        torch.cuda.synchronize()
        try:
            c = A * d
            out["torch"] = dict(ttimer(lambda i: A * d),
                                output_nnz=int(c._nnz()) if c.is_sparse else None,
                                output_coalesced=bool(c.is_coalesced()) if c.is_sparse else None,
                                output_format=str(c.layout))
        except RuntimeError as e:
            out["torch"] = {"skipped": f"unsupported: {str(e).splitlines()[0][:120]}"}
        if cp is not None:
            import cupyx.scipy.sparse as cps
            Acsr = cps.coo_matrix((cp.asarray(va), (cp.asarray(ia[0].to(torch.int32)),
                                                    cp.asarray(ia[1].to(torch.int32)))),
                                  shape=shape).tocsr()
            dc = cp.asarray(d)
            try:
                c = Acsr.multiply(dc)
                out["cupy"] = dict(ctimer(lambda i: Acsr.multiply(dc)),
                                   output_nnz=int(c.nnz) if hasattr(c, "nnz") else None,
                                   output_format=type(c).__name__)
            except Exception as e:  # noqa: BLE001 - report whatever CuPy refuses
                out["cupy"] = {"skipped": f"unsupported: {str(e).splitlines()[0][:120]}"}
    return out
