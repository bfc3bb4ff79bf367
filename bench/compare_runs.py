#!/usr/bin/env python3
"""The recorded `ewise.compare` runs (issue 37; docs/benchmarks.md, "Dense or COO"): f32 and bf16
at 4096² and 16384² on the GPU, each with its plot, rows and verdicts.

    PYTHONPATH=build/python python3 bench/compare_runs.py OUT_DIR [ROWS ...]

ROWS picks the shapes by their row count (4096, 16384); all of them without. Writes OUT_DIR/<op>_<dtype>_<rows>.json and .png and prints the rows (the seed is fixed, so a
run draws the same operands)."""
import json
import sys
import time

import ewise

CASES = [((4096, 4096), "float32", ("multiply", "add"), (1e-4, 1e-3, 1e-2, 0.05, 0.2)),
         ((4096, 4096), "bfloat16", ("multiply",), (1e-4, 1e-3, 1e-2, 0.05, 0.2)),
         ((16384, 16384), "float32", ("multiply",), (1e-4, 1e-3, 1e-2, 0.05)),
         ((16384, 16384), "bfloat16", ("multiply",), (1e-4, 1e-3, 1e-2, 0.05))]


def main(out, rows_wanted):
    for shape, dtype, ops, densities in CASES:
        if rows_wanted and shape[0] not in rows_wanted:
            continue
        for op in ops:
            start = time.time()
            tag = f"{op}_{dtype}_{shape[0]}"
            rows = ewise.compare(shape, dtype, op, densities, device="gpu", seed=20261127,
                                 plot=f"{out}/{tag}.png")
            print(f"== {tag} on {rows.device} seed {rows.seed} ({time.time() - start:.1f} s)")
            for r in rows:
                print(f"  {r['density']:<8g} nnz {r['nnz_a']:>10} {r['nnz_c']:>10}  "
                      f"dense {r['dense_ms']:.4f}  coo {r['coo_ms']:.4f} ({r['speedup']:.2f}x)  "
                      f"coo*dense {r['coo_dense_ms']:.4f}  to_coo {r['to_coo_ms']:.4f}  "
                      f"to_dense {r['to_dense_ms']:.4f}  conv {r['speedup_converting']:.2f}x  "
                      f"ok={r['verified']}")
            print("  ", rows.verdict)
            print("  ", rows.verdict_converting)
            with open(f"{out}/{tag}.json", "w") as f:
                json.dump({"rows": list(rows), "verdict": rows.verdict,
                           "verdict_converting": rows.verdict_converting,
                           "crossover": rows.crossover,
                           "crossover_converting": rows.crossover_converting,
                           "device": rows.device, "seed": rows.seed}, f)
            sys.stdout.flush()


if __name__ == "__main__":
    main(sys.argv[1], {int(r) for r in sys.argv[2:]})
