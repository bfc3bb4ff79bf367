"""The torch tensors the PyTorch tests draw (test_torch.py, test_torch_routes.py): the seed,
the dtypes and operations they sweep, and random values. Skips without torch."""
import os
import sys

import pytest

torch = pytest.importorskip("torch", reason="torch is not installed (CI runs without it)")

SEED = int(os.environ.get("EWISE_SEED", "20240615"))
print(f"seed {SEED} (EWISE_SEED replays)", file=sys.stderr)

DTYPES = [torch.float16, torch.bfloat16, torch.float32, torch.float64, torch.int32,
          torch.int64]
TORCH_OPS = {"add": torch.add, "sub": torch.sub, "mul": torch.mul, "minimum": torch.minimum,
             "maximum": torch.maximum}
# (a's shape, b's shape): both broadcast, b lower rank, b scalar, a broadcast by b.
SHAPES = [((3, 1, 5), (4, 1)), ((2, 6), (6,)), ((4, 3), ()), ((1, 3), (2, 3))]


def random(generator, shape, dtype):
    if dtype.is_floating_point:
        return (torch.randn(shape, generator=generator, dtype=torch.float64) * 8).to(dtype)
    return torch.randint(-1000, 1000, shape, generator=generator).to(dtype)
