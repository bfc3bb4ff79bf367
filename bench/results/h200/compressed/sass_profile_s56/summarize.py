"""Warp instructions of the compressed single pass by SASS block (sass_{mult,add}.csv.gz: ncu's
source page, SASS, of one mask multiply and one mask add at 3f96fd7, H200)."""
import csv
import gzip
import io
import sys

for kind in ("mult", "add"):
    rows = list(csv.reader(io.TextIOWrapper(gzip.open(f"{sys.argv[1]}/sass_{kind}.csv.gz"),
                                            "utf-8")))
    hdr, data = rows[1], rows[2:]
    ie, src = hdr.index("Instructions Executed"), hdr.index("Source")
    count = [int(r[ie]) if r[ie].isdigit() else 0 for r in data]
    warps = count[0]  # the kernel's first instruction: once a warp
    total = sum(count)
    print(f"{kind}: {total} warp instructions, {warps} warps, {total / warps:.0f} a warp")
    blocks = []  # runs of consecutive instructions executed equally often
    for i, c in enumerate(count):
        if blocks and blocks[-1][1] == c:
            blocks[-1][2] += 1
        else:
            blocks.append([i, c, 1])
    for i, c, n in sorted(blocks, key=lambda b: -b[1] * b[2])[:12]:
        print(f"  SASS line {i:5d}: {n:4d} instructions x {c / warps:5.2f} a warp = "
              f"{c * n / total * 100:4.1f}%  {data[i][src].strip()[:50]}")
