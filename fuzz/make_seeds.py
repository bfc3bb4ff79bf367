#!/usr/bin/env python3
"""Writes the hand-made seed inputs of fuzz/corpus/npy and fuzz/corpus/mtx (no NumPy needed).

    python3 fuzz/make_seeds.py          # from the repository root

Each seed is a small valid (or deliberately near-valid) file exercising one feature of the
readers; the fuzzers mutate them, and tests/test_fuzz_corpus.cpp replays them. Inputs found by
fuzzing are added next to them under their own names (see docs/reliability.md)."""
import os
import struct

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus")


def npy(version, header, data, pad=True):
    """A .npy file: magic, version, header length, header (padded to 64 like np.save), data."""
    len_bytes = 2 if version == 1 else 4
    h = header.encode("latin1")
    if pad:
        total = 8 + len_bytes + len(h) + 1
        h += b" " * ((64 - total % 64) % 64) + b"\n"
    length = struct.pack("<H" if len_bytes == 2 else "<I", len(h))
    return b"\x93NUMPY" + bytes([version, 0]) + length + h + data


def dict_header(descr, fortran, shape, quote="'"):
    q = quote
    return "{%sdescr%s: %s%s%s, %sfortran_order%s: %s, %sshape%s: %s, }" % (
        q, q, q, descr, q, q, q, "True" if fortran else "False", q, q, shape)


NPY = {
    "f32_2x3": npy(1, dict_header("<f4", False, "(2, 3)"), struct.pack("<6f", *range(1, 7))),
    "f64_vector": npy(1, dict_header("<f8", False, "(3,)"), struct.pack("<3d", 0.5, -0.0, 1e300)),
    "i32_fortran_2x3x4": npy(1, dict_header("<i4", True, "(2, 3, 4)"),
                             struct.pack("<24i", *range(-12, 12))),
    "i64_empty_0x5": npy(1, dict_header("<i8", False, "(0, 5)"), b""),
    "f16_scalar": npy(1, dict_header("<f2", False, "()"), struct.pack("<H", 0x3C00)),
    "bf16_lt_v2": npy(1, dict_header("<V2", False, "(4,)"), struct.pack("<4H", 0x3F80, 0xBF80, 0x7FC0, 0)),
    "bf16_pipe_v2": npy(1, dict_header("|V2", True, "(2, 2)"), struct.pack("<4H", 1, 2, 3, 4)),
    "version2_f32": npy(2, dict_header("<f4", False, "(1, 2)"), struct.pack("<2f", 1.5, 2.5)),
    "version3_i64": npy(3, dict_header("<i8", False, "(2,)"), struct.pack("<2q", -2**63, 2**63 - 1)),
    "python2_long_double_quotes": npy(1, dict_header("<f4", False, "(2L, 1L)", quote='"'),
                                      struct.pack("<2f", 3.0, 4.0)),
    "keys_reordered_unpadded": npy(1, "{'shape': (1,), 'fortran_order': False, 'descr': '<f8'}",
                                   struct.pack("<d", 7.0), pad=False),
    "rank8_ones": npy(1, dict_header("<i4", False, "(1, 1, 1, 1, 1, 1, 1, 2)"), struct.pack("<2i", 5, 6)),
    "big_endian_rejected": npy(1, dict_header(">f4", False, "(1,)"), b"\0\0\0\0"),
    "truncated_data_rejected": npy(1, dict_header("<f8", False, "(4,)"), b"\0" * 30),
    "lying_huge_shape_rejected": npy(1, dict_header("<f4", False, "(4611686018427387904, 4)"), b"\0" * 16),
}

# Reproducers of bugs fuzzing found (bug-<what>.npy; no expectation on accepted/rejected).
NPY_BUGS = {
    # TensorDesc::is_contiguous (src/tensor.cpp) is false for the row-major strides that
    # TensorDesc::contiguous gives a shape with a 0 extent after the first dim: (5, 0) gets
    # strides (1, 1), and is_contiguous wants stride 0 for dim 0. So read_npy returns a
    # HostTensor whose descriptor says it is not contiguous (the fuzzer found (0, 0)).
    "empty_5x0_not_contiguous": npy(1, dict_header("<i8", False, "(5, 0)"), b""),
}

MTX = {
    "real_general": "%%MatrixMarket matrix coordinate real general\n% a comment\n3 4 4\n"
                    "1 1 1.5\n3 4 -2e-3\n2 2 0\n1 3 -0\n",
    "integer_symmetric": "%%MatrixMarket matrix coordinate integer symmetric\n3 3 3\n"
                         "1 1 9223372036854775807\n3 1 -7\n2 3 +4\n",
    "pattern_general_unsorted": "%%MatrixMarket matrix coordinate pattern general\n4 2 3\n"
                                "4 2\n1 1\n3 2\n",
    "skew_symmetric_real": "%%MatrixMarket matrix coordinate real skew-symmetric\n3 3 2\n"
                           "2 1 2.5\n3 2 -1\n",
    "duplicates": "%%MatrixMarket matrix coordinate real general\n2 2 4\n1 1 1\n2 2 2\n1 1 3\n"
                  "1 1 4\n",
    "crlf_mixed_case_blank_lines": "%%MatrixMarket Matrix Coordinate REAL General\r\n\r\n"
                                   "%comment\r\n2 2 1\r\n\r\n2 1 4.25\r\n",
    "empty_0x0": "%%MatrixMarket matrix coordinate real general\n0 0 0\n",
    "int64_indices": "%%MatrixMarket matrix coordinate real general\n3000000000 2 2\n"
                     "2999999999 2 1\n1 1 2\n",
    "special_values": "%%MatrixMarket matrix coordinate real general\n1 5 5\n1 1 nan\n1 2 -inf\n"
                      "1 3 1e-400\n1 4 4.9e-324\n1 5 1.7976931348623157e308\n",
    "no_final_newline": "%%MatrixMarket matrix coordinate integer general\n1 1 1\n1 1 -3",
    "array_rejected": "%%MatrixMarket matrix array real general\n2 2\n1\n2\n3\n4\n",
    "lying_entry_count_rejected": "%%MatrixMarket matrix coordinate real general\n1000000 1000000 999999999999\n"
                         "1 1 1\n",
}


# ---- plan: the byte encoding decoded by plan_entry in fuzz/entries_plan.cpp -----------------
SMALL = {1: 0, 2: 1, 3: 2, 4: 3, 5: 5, 7: 6, 0: 7}  # extent -> byte (kSmall in entries_plan.cpp)
DTYPE = {"f16": 0, "bf16": 1, "f32": 2, "f64": 3, "i32": 4, "i64": 5}
OP = {"add": 0, "sub": 1, "mul": 2, "div": 3, "min": 4, "max": 5}
CONTIGUOUS, REVERSED, SWAPPED = [0], [3], lambda i, j: [4, i, j]
RAW = lambda *strides: [7] + [byte for st in strides for byte in struct.pack("<q", st)]
DISJOINT, SAME_ADDRESS, NEAR = [0], [3], lambda delta: [4, delta + 128]


def extent(e):
    """The bytes decode_extent reads back as e."""
    if e in SMALL:
        return [SMALL[e]]
    if 8 <= e <= 113 and (e - 8) % 7 == 0:
        return [232 + (e - 8) // 7]
    if e > 0 and e & (e - 1) == 0:
        return [248, e.bit_length() - 1]
    if e > 1 and (e - 1) & (e - 2) == 0:
        return [252, (e - 1).bit_length() - 1]
    return [254] + list(struct.pack("<q", e))


def shape(*extents):
    return [len(extents)] + [byte for e in extents for byte in extent(e)]


def plan(dtype, op, a, b, out_mode=0, out=(), strides=(CONTIGUOUS, CONTIGUOUS, CONTIGUOUS),
         addresses=(DISJOINT, DISJOINT), layout=0):
    body = [DTYPE[dtype], OP[op]] + a + b + [out_mode] + list(out)
    for s in strides:
        body += s
    for ad in addresses:
        body += ad
    return bytes(body + [layout] + [0x5A] * 8)


PLAN = {
    "f32_add_row_broadcast": plan("f32", "add", shape(3, 4), shape(4)),
    "f64_mul_outer_3d": plan("f64", "mul", shape(2, 1, 3), shape(4, 1)),
    "i32_div_scalar": plan("i32", "div", shape(), shape(5)),
    "f16_sub_in_place": plan("f16", "sub", shape(7, 5), shape(7, 5), layout=1),
    "bf16_min_transposed_a": plan("bf16", "min", shape(4, 3), shape(4, 3),
                                  strides=(SWAPPED(0, 1), CONTIGUOUS, CONTIGUOUS)),
    "i64_max_reversed_out": plan("i64", "max", shape(3, 1, 5), shape(1, 2, 5),
                                 strides=(CONTIGUOUS, CONTIGUOUS, REVERSED)),
    "f32_empty_extent": plan("f32", "add", shape(0, 4), shape(1, 4)),
    "f32_rank8": plan("f32", "add", shape(2, 1, 2, 1, 2, 1, 2, 1), shape(1, 3)),
    "f32_tile_edge_33x31": plan("f32", "mul", shape(33, 31), shape(33, 1)),
    "partial_overlap_rejected": plan("f32", "add", shape(8), shape(8), addresses=(NEAR(1), DISJOINT)),
    "shape_mismatch_rejected": plan("f32", "add", shape(3, 4), shape(5, 4)),
}

# Inputs that reproduced bugs found by fuzzing (written as bug-<what>.bin; no expectation on
# accepted/rejected, they must just not crash or trip a sanitizer). See docs/reliability.md.
PLAN_BUGS = {
    # check_no_partial_overlap (src/broadcast.cpp): an f16 output (2,) with stride 2^62-1 is
    # valid (its last byte offset 2^63-2 fits int64) but (max_offset()+1)*elem overflows, and so
    # does adding byte offsets near 2^63 to the data address: signed overflow (UBSan).
    "overlap_range_overflow": plan("f16", "add", shape(2), shape(2),
                                   strides=(CONTIGUOUS, CONTIGUOUS, RAW(2**62 - 1))),
    # The same overflow turned into a wrong answer: input a (2,) with stride 2^62-1 starts at
    # the output's first element, so it partially overlaps the output, but its byte range wraps
    # around and plan_binary accepts it (found by fuzzing; invariant "does not share a byte").
    "overlap_range_overflow_accepts_overlap": plan(
        "f16", "add", shape(2), shape(2), strides=(RAW(2**62 - 1), CONTIGUOUS, CONTIGUOUS),
        addresses=(SAME_ADDRESS, DISJOINT)),
    # TensorDesc::is_non_overlapping (src/tensor.cpp): validate() stops checking strides once
    # numel is 0, so an empty output (0,3,3) with strides (1,2^62,2^62) is valid, and the sum
    # of the spans of its extent-3 dims overflows int64 (UBSan).
    "empty_output_reach_overflow": plan("f32", "add", shape(0, 3, 3), shape(0, 3, 3),
                                        strides=(CONTIGUOUS, CONTIGUOUS, RAW(1, 2**62, 2**62))),
}


def main():
    for name, data in NPY.items():
        os.makedirs(os.path.join(ROOT, "npy"), exist_ok=True)
        with open(os.path.join(ROOT, "npy", "seed-" + name + ".npy"), "wb") as f:
            f.write(data)
    for name, data in NPY_BUGS.items():
        with open(os.path.join(ROOT, "npy", "bug-" + name + ".npy"), "wb") as f:
            f.write(data)
    for name, text in MTX.items():
        os.makedirs(os.path.join(ROOT, "mtx"), exist_ok=True)
        with open(os.path.join(ROOT, "mtx", "seed-" + name + ".mtx"), "wb") as f:
            f.write(text.encode("ascii"))
    for name, data in PLAN.items():
        os.makedirs(os.path.join(ROOT, "plan"), exist_ok=True)
        with open(os.path.join(ROOT, "plan", "seed-" + name + ".bin"), "wb") as f:
            f.write(data)
    for name, data in PLAN_BUGS.items():
        with open(os.path.join(ROOT, "plan", "bug-" + name + ".bin"), "wb") as f:
            f.write(data)


if __name__ == "__main__":
    main()
