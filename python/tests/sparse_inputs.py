"""Random PyTorch sparse operands shared by the torch tests (CPU) and the GPU tests."""


def random_torch_sparse(torch, generator, shape, dtype, nnz=40, device="cpu"):
    """Unsorted, about a fifth of the entries duplicates, small integer values (exact sums in
    any order); drawn on the CPU by `generator`, then moved to `device`."""
    rows = torch.randint(0, shape[0], (nnz,), generator=generator)
    cols = torch.randint(0, shape[1], (nnz,), generator=generator)
    rows[nnz // 2:nnz // 2 + nnz // 5] = rows[:nnz // 5]
    cols[nnz // 2:nnz // 2 + nnz // 5] = cols[:nnz // 5]
    vals = torch.randint(-4, 5, (nnz,), generator=generator).to(dtype)
    return torch.sparse_coo_tensor(torch.stack((rows, cols)), vals, shape,
                                   check_invariants=True).to(device)
