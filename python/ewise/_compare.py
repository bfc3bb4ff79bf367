"""ewise.compare: dense or COO for a shape, dtype, operation and densities, or for the caller's
own SciPy matrices. The measuring and checking are the C++ library's (ewise/compare.hpp, the
CLI's `ewise compare`); this module takes Python arguments, returns the rows and draws the
plot (with matplotlib)."""
import json
import random

from . import _ewise
from ._interop import adapter
from ._interop.interface import DTYPE_NAMES, NUMPY_NAMES


class CompareRows(list):
    """compare()'s rows (one dict a density: density, nnz_a, nnz_b, nnz_c, dense_ms, coo_ms,
    coo_dense_ms, to_coo_ms, to_dense_ms, speedup, speedup_converting, verified), with the run's
    summary as attributes: device, shape, dtype, op, seed, crossover and crossover_converting
    (densities, None where the speedup does not cross 1 in the range), verdict and
    verdict_converting (one line each)."""


def _dtype(dtype):
    name = str(dtype).rpartition(".")[2]
    if name in NUMPY_NAMES:
        return name
    if name in DTYPE_NAMES:
        return DTYPE_NAMES[name]
    raise ValueError(f"ewise.compare: unknown dtype {dtype!r} (COO values are float16, "
                     "bfloat16, float32, float64, int32 or int64)")


def _coo(matrix):
    """A SciPy sparse matrix or array (any format) as the extension's host COO operand, read by
    its framework's adapter as every sparse call reads it."""
    if not hasattr(matrix, "tocoo"):
        raise TypeError(f"ewise.compare: a and b are SciPy sparse matrices or arrays, not "
                        f"{type(matrix).__name__}")
    op = adapter(matrix).coo(matrix, "a")
    return _ewise.Coo(op.rows, op.cols, op.vals, op.shape[0], op.shape[1], op.canonical)


def _plot(rows, path):
    """Time against density, log-log: each form a line, the crossovers marked."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    density = [r["density"] for r in rows]
    form = "COO\u2299COO" if rows.op == "multiply" else "COO\u2295COO"
    with_dense = "COO\u2299dense" if rows.op == "multiply" else "COO\u2295dense"
    fig, ax = plt.subplots(figsize=(7, 4.5))
    ax.plot(density, [r["dense_ms"] for r in rows], "o-", color="black", label="dense")
    ax.plot(density, [r["coo_ms"] for r in rows], "s-", color="tab:blue", label=form)
    ax.plot(density, [r["coo_dense_ms"] for r in rows], "^-", color="tab:green",
            label=with_dense)
    ax.plot(density, [r["to_coo_ms"] + r["coo_ms"] + r["to_dense_ms"] for r in rows], "s--",
            color="tab:orange", label=f"{form} with dense \u2192 COO \u2192 dense")
    for x, style, what in ((rows.crossover, "-", form),
                           (rows.crossover_converting, "--", "with conversions")):
        if x is not None:
            ax.axvline(x, color="tab:red", linestyle=style, linewidth=1)
            ax.annotate(f"{what} = dense at {x:.3g}", (x, ax.get_ylim()[1]), rotation=90,
                        va="top", ha="right", fontsize=8, color="tab:red")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("density (fraction of entries stored)")
    ax.set_ylabel("time (ms, median)")
    rows_, cols = rows.shape
    ax.set_title(f"{rows.op}, {rows.dtype} {rows_}\u00d7{cols} on {rows.device}\n{rows.verdict}",
                 fontsize=9)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def compare(shape=None, dtype="float32", op="multiply", density=(0.001, 0.01, 0.1), *, a=None,
            b=None, device=None, seed=None, plot=None):
    """Dense or COO? For each density, random operands (canonical COO of `shape` and `dtype`,
    seeded) or the SciPy matrices `a` (and `b`, else one drawn at a's density): the operation
    on their dense forms, COO op COO, COO op dense, and the conversions a pipeline holding dense
    data pays (dense -> COO of each operand, COO -> dense of the result), every result checked
    bit for bit against the dense one. op: multiply (COO ⊙ COO) or add, subtract, minimum,
    maximum (COO ⊕ COO). device: "gpu", "cpu" (the CPU backend), or None (the GPU when one is
    usable). plot: a file name for the plot (PNG by its suffix; needs matplotlib).

    Returns a CompareRows: the rows as a list of dicts, and the crossover densities and verdicts
    as attributes. ValueError for a density outside (0, 1], an unknown dtype or op, or a shape
    whose dense forms do not fit in the device's (or host's) memory, before anything is
    allocated."""
    if plot is not None:
        try:
            import matplotlib  # noqa: F401
        except ModuleNotFoundError as e:
            raise ModuleNotFoundError("ewise.compare(plot=...) needs matplotlib, which is not "
                                      "installed") from e
    if device is None:
        device = "gpu" if _ewise.gpu_available() else "cpu"
    if device not in ("cpu", "gpu"):
        raise ValueError(f"ewise.compare: device is 'cpu', 'gpu' or None, not {device!r}")
    if a is None:
        if b is not None:
            raise ValueError("ewise.compare: b is given without a")
        try:
            nrows, ncols = (int(n) for n in shape)
        except (TypeError, ValueError):
            raise ValueError(f"ewise.compare: shape is (rows, cols), not {shape!r}") from None
        densities = [float(d) for d in ([density] if isinstance(density, (int, float))
                                        else density)]
        name = _dtype(dtype)
    else:
        if shape is not None:
            raise ValueError("ewise.compare: shape is a's when a is given")
        nrows, ncols, densities, name = 0, 0, [], "f32"
    seed = random.getrandbits(63) if seed is None else int(seed)
    rows = _rows(json.loads(_ewise.compare(nrows, ncols, name, op, densities, device == "gpu",
                                           seed, None if a is None else _coo(a),
                                           None if b is None else _coo(b))))
    if plot is not None:
        _plot(rows, plot)
    return rows


def _rows(result):
    """The CompareRows of ewise::compare's JSON (CompareResult::json)."""
    rows = CompareRows(result["rows"])
    rows.device, rows.shape, rows.op, rows.seed = (result["device"], tuple(result["shape"]),
                                                   result["op"], result["seed"])
    rows.dtype = NUMPY_NAMES[result["dtype"]]
    rows.crossover, rows.crossover_converting = (result["crossover"],
                                                 result["crossover_converting"])
    rows.verdict, rows.verdict_converting = result["verdict"], result["verdict_converting"]
    return rows


if __name__ == "__main__":
    # `python3 -m ewise._compare RESULT.json PLOT.png`: the plot of `ewise compare --json`'s
    # file (the CLI's --plot runs this).
    import sys
    if len(sys.argv) != 3:
        sys.exit("usage: python3 -m ewise._compare RESULT.json PLOT.png")
    with open(sys.argv[1]) as f:
        _plot(_rows(json.load(f)), sys.argv[2])
