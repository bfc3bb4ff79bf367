#!/usr/bin/env python3
"""ewise from Python: a masked attention-score step and a sparse gradient update.

Dense: scores (B, T, T) scaled by a per-head factor and masked by a causal (T, T) mask that
broadcasts, then shifted by the row maximum, on the GPU with PyTorch or CuPy when one is there,
else on the CPU with NumPy. Sparse (SciPy, CPU backend): an embedding gradient with duplicate
rows accumulated into a weight table in place, and a sparse mask applied to a sparse matrix.
Checks every result; exit status 0 when right, 1 when wrong, 77 when NumPy or SciPy is missing.
"""
import sys

try:
    import numpy as np
    import scipy.sparse as sp
except ImportError as e:
    print(f"skipped: {e.name} is not installed")
    sys.exit(77)

import ewise


def arrays():
    """The array module to run the dense part on: torch or CuPy on a GPU, else NumPy."""
    if ewise.gpu_available():
        try:
            import torch
            if torch.cuda.is_available():
                return "torch", lambda x: torch.from_numpy(x).cuda(), lambda x: x.cpu().numpy()
        except ImportError:
            pass
        try:
            import cupy
            return "cupy", cupy.asarray, cupy.asnumpy
        except ImportError:
            pass
    return "numpy", lambda x: x, lambda x: x


def main():
    rng = np.random.default_rng(7)
    name, to, back = arrays()
    B, T = 4, 64
    scores_np = rng.standard_normal((B, T, T)).astype(np.float32)
    mask_np = np.tril(np.ones((T, T), np.float32))  # causal: 1 on and below the diagonal
    scale_np = np.full((B, 1, 1), 0.125, np.float32)

    # Dense: masked = (scores * scale) * mask; shifted = masked - rowmax, all broadcast.
    scores, mask, scale = to(scores_np), to(mask_np), to(scale_np)
    scaled = ewise.mul(scores, scale)
    ewise.mul(scaled, mask, out=scaled)  # in place
    rowmax = to(back(scaled).max(axis=2, keepdims=True))
    shifted = ewise.sub(scaled, rowmax)
    want = scores_np * scale_np * mask_np
    want = want - want.max(axis=2, keepdims=True)
    ok = np.array_equal(back(shifted), want)
    print(f"dense on {name}: {'ok' if ok else 'WRONG'} {tuple(shifted.shape)}")

    # Sparse: weight (V, D) += the gradient of a batch that looked up rows [3, 9, 3, 41]
    # (row 3 twice: its two gradient rows are summed), only those rows touched.
    V, D = 100, 8
    weight = rng.standard_normal((V, D))
    before = weight.copy()
    ids = np.array([3, 9, 3, 41])
    rows = np.repeat(ids, D)
    cols = np.tile(np.arange(D), len(ids))
    grad = sp.coo_matrix((rng.standard_normal(rows.size), (rows, cols)), shape=(V, D))
    ewise.sparse.accumulate("add", weight, grad)
    ok_acc = np.array_equal(weight, before + grad.toarray())  # duplicates summed first
    ok_acc &= np.array_equal(np.delete(weight, ids, axis=0), np.delete(before, ids, axis=0))
    print(f"sparse gradient accumulated into rows {sorted(set(ids.tolist()))}: "
          f"{'ok' if ok_acc else 'WRONG'}")

    # Sparse ⊙ sparse: a feature matrix kept where a random mask stores an entry.
    features = sp.random(50, 40, density=0.2, format="csr", random_state=1)
    keep = sp.random(50, 40, density=0.3, format="coo", random_state=2)
    kept = ewise.sparse.multiply(features, keep, drop_zeros=True)
    ok_mul = np.array_equal(kept.toarray(), features.multiply(keep).toarray())
    print(f"sparse mask: {kept.nnz} entries kept, {'ok' if ok_mul else 'WRONG'}")
    return 0 if ok and ok_acc and ok_mul else 1


if __name__ == "__main__":
    sys.exit(main())
