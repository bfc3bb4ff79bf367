#!/usr/bin/env python3
"""Writes the hand-made seed inputs of fuzz/corpus/{npy,mtx,plan,api} (no NumPy needed).

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
# kAllDTypes and kAllOps (ewise/tensor.hpp, ewise/ops.hpp), in their order.
ALL_DTYPES = ["f16", "bf16", "f32", "f64", "i32", "i64", "bool", "i8", "u8", "i16", "u16", "u32", "u64"]
ALL_OPS = ["add", "sub", "mul", "div", "min", "max", "floor_divide", "remainder", "power", "fmin",
           "fmax", "equal", "not_equal", "less", "less_equal", "greater", "greater_equal",
           "logical_and", "logical_or", "logical_xor", "bitwise_and", "bitwise_or", "bitwise_xor"]
DTYPE = {name: i for i, name in enumerate(ALL_DTYPES)}
OP = {name: i for i, name in enumerate(ALL_OPS)}
MIXED = 0xC0  # a first byte >= 0xC0: each operand's dtype from a byte of its own
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
    """dtype: one name, or (a, b, out) names for mixed dtypes."""
    if isinstance(dtype, tuple):
        body = [MIXED, OP[op]] + [DTYPE[t] for t in dtype] + a + b + [out_mode] + list(out)
    else:
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
    # Mixed dtypes and the new operations; refused dtypes (check_types) write nothing.
    "mixed_bf16_f32_add_row_broadcast": plan(("bf16", "f32", "f32"), "add", shape(3, 4), shape(4)),
    "mixed_u8_bool_logical_and": plan(("u8", "bool", "bool"), "logical_and", shape(5, 3), shape(3)),
    "mixed_i8_u8_floor_divide_into_i16": plan(("i8", "u8", "i16"), "floor_divide", shape(4, 4), shape(4, 1)),
    "mixed_f32_i32_add_into_i32_refused": plan(("f32", "i32", "i32"), "add", shape(3, 4), shape(4)),
    "bool_subtract_refused": plan("bool", "sub", shape(6), shape(6)),
    "i32_divide_into_i32_refused": plan("i32", "div", shape(2, 3), shape(3)),
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


# ---- api: the byte encoding decoded by decode_api_call in fuzz/api_call.cpp ------------------
# Bytes past the end read as zero, which decodes the benign choice everywhere.
OPS = ["multiply_coo", "multiply_dense", "multiply_values", "multiply_values_into_a", "coalesce",
       "coo_to_dense", "dense_to_coo", "csr_row_offsets", "check_indices", "binary", "combine_coo",
       "combine_dense", "combine_dense_out", "accumulate"]
DTYPES = ALL_DTYPES  # the sparse calls take the first six
SEED = bytes(range(1, 9))  # the value and coordinate generator's seed
I64, DROP_ZEROS, NO_VALIDATE, TORCH = 1, 2, 12, 96


def ext(n):
    """The bytes decode_extent reads as n (0..9), or a special: '2^31', 'sqrt_max' (3037000499,
    whose square is just under 2^63)."""
    return {0: [0], 1: [9], "2^31": [11], "sqrt_max": [13, 1], "2^40": [13, 3]}.get(
        n, [n - 1] if isinstance(n, int) else None)


def entries(sels, order=0, vals=None, honest=True):
    """decode_entries: count, per entry a pool selector (0..11) or [14, bad, col], the order
    (0 as given, 1 sorted, 2 sorted unique, 3 reversed), one value selector per entry, the
    canonical byte (honest flag or a lie)."""
    out = [len(sels)]
    for s in sels:
        out += s if isinstance(s, list) else [s]
    vals = vals if vals is not None else [16 * (i + 1) for i in range(len(sels))]
    return out + [order] + vals + [1 if honest else 0]


def sparse(op, dtype, flags, rows, cols, pool, a, tail=()):
    return bytes([OPS.index(op), DTYPES.index(dtype)]) + SEED + bytes(
        [flags] + ext(rows) + ext(cols) + [len(pool) - 1] + [b for rc in pool for b in rc] + a +
        list(tail))


def any_dtype_byte(dtype, at_least):
    """A byte >= at_least that picks `dtype` from kAllDTypes (byte % 13)."""
    return next(b for b in range(at_least, 256) if b % len(ALL_DTYPES) == DTYPES.index(dtype))


SCALAR_KINDS = ["int", "float", "bool", "typed"]  # decode_scalar's kinds


def binary(dtype, op, rank_ext, x_mode=0, y_mode=0, kernel=0, tunables=0, where=0, flags=0,
           strides=(0, 0, 0), y_dtype=None, out_dtype=None, torch=False, scalar=None):
    """binary: op, kernel byte (odd names kKernelNames[1 + (k / 2) % 9]), tunables byte, rank and
    extent bytes (indices into kExt), the inputs' shape modes, y's dtype (None: x's), out's
    (None: the result's), the promotion byte (3: PyTorch's; with a scalar y, 28 + 32 * its kind)
    and the scalar's value byte (kind, index into decode_scalar's kInts / kFloats, or a value
    selector of write_value for a typed scalar of y's dtype), strides modes, zone, placement."""
    promotion = (3 if torch else 0) + (0 if scalar is None else 28 + 32 * SCALAR_KINDS.index(scalar[0]))
    dtypes = [0 if y_dtype is None else any_dtype_byte(y_dtype, 128),
              0 if out_dtype is None else any_dtype_byte(out_dtype, 224), promotion]
    if scalar is not None:
        dtypes.append(scalar[1])
    return bytes([9, DTYPES.index(dtype)]) + SEED + bytes(
        [flags, OP[op], kernel, tunables, len(rank_ext)] + list(rank_ext) + [x_mode, y_mode] +
        dtypes + list(strides) + [0, where])


def union(op, fill_a=None, fill_b=None):
    """The union calls' op byte and fill bytes: a fill is 0 (None) or an index into kFills of
    decode_fill (0: 1, 1: -2, 2: 0.5, 4: NaN, 5: inf, 8: 2^31, ...)."""
    return [OP[op]] + [0 if f is None else 128 + f for f in (fill_a, fill_b)]


POOL3 = [(0, 0), (1, 2), (2, 0)]  # (0,0), (nrows-1, ncols/2), (nrows/2, 0)
DUPS_UNSORTED = entries([2, 0, 1, 0, 2, 1])
B4 = entries([0, 1, 2, 0], order=1)
NAN_VALUES = [105, 100, 116, 0, 101, 104]  # NaN, +inf, NaN, small, -inf, 65504
API = {
    "multiply_coo_f32_dups_unsorted": sparse("multiply_coo", "f32", 0, 4, 5, POOL3, DUPS_UNSORTED, [0] + B4 + [0]),
    "multiply_coo_f16_bitmap_drop_zeros": sparse("multiply_coo", "f16", DROP_ZEROS, 7, 3, POOL3,
                                                 entries([2, 0, 1, 0], vals=[96, 97, 20, 30]), [0] + B4 + [3]),
    "multiply_coo_i64_huge_shape_merge": sparse("multiply_coo", "i64", I64, "sqrt_max", "sqrt_max", POOL3, DUPS_UNSORTED,
                                                [0] + B4 + [2]),
    "multiply_coo_bf16_nan_linear_search": sparse("multiply_coo", "bf16", 0, 3, 3, POOL3,
                                                  entries([0, 1, 2, 0, 1, 2], vals=NAN_VALUES), [0] + B4 + [4]),
    "multiply_coo_canonical_no_validate": sparse("multiply_coo", "f64", NO_VALIDATE, 9, 9, POOL3,
                                                 entries([0, 1, 2], order=2), [0] + entries([0, 2], order=2) + [1]),
    "multiply_dense_f64_row_vector": sparse("multiply_dense", "f64", 0, 4, 6, POOL3, DUPS_UNSORTED, [0, 0, 2, 0]),
    "multiply_dense_i32_full_transposed": sparse("multiply_dense", "i32", DROP_ZEROS, 5, 4, POOL3, DUPS_UNSORTED,
                                                 [0, 0, 0, 3]),
    "multiply_values_f32_column": sparse("multiply_values", "f32", 0, 4, 4, POOL3, DUPS_UNSORTED, [0, 0, 4, 0, 0]),
    "multiply_values_into_a_bf16_scalar": sparse("multiply_values_into_a", "bf16", 0, 6, 2, POOL3,
                                                 entries([1, 1, 0], vals=NAN_VALUES[:3]), [0, 0, 5, 0]),
    "coalesce_i64_drop_zeros": sparse("coalesce", "i64", I64 | DROP_ZEROS, 3, 8, POOL3,
                                      entries([0, 1, 0, 2], vals=[96, 96, 96, 97]), [0]),
    "coo_to_dense_f16_nan": sparse("coo_to_dense", "f16", 0, 3, 3, POOL3, entries([0, 1, 1], vals=NAN_VALUES[:3]), [0]),
    "csr_row_offsets_canonical": sparse("csr_row_offsets", "f32", 0, 6, 4, POOL3, entries([0, 1, 2], order=2), [0]),
    "check_indices_empty_0x5": sparse("check_indices", "f32", 0, 0, 5, [(0, 0)], [0, 0, 1]),
    "dense_to_coo_f32_3x4_transposed": bytes([6, 2]) + SEED + bytes([0, 0, 43, 3]),
    "binary_f32_add_row_broadcast": binary("f32", "add", [2, 3], y_mode=5),
    "binary_i32_floor_divide_in_place": binary("i32", "floor_divide", [5, 4], where=4),
    "binary_f16_max_sliding": binary("f16", "max", [6, 7], y_mode=5, kernel=5),
    "binary_bf16_mul_transposed_x": binary("bf16", "mul", [7, 8], strides=(3, 0, 0)),
    "binary_f64_min_empty_huge": binary("f64", "min", [2], flags=7),
    # Rejected: a row index of -1, a canonical flag that lies, a COO not marked canonical for CSR,
    # an unknown algorithm, the out shape wrong, an invalid threads value.
    "multiply_coo_bad_row_rejected": sparse("multiply_coo", "f32", 0, 4, 5, POOL3, entries([0, [14, 0, 0], 1]),
                                            [0] + B4 + [0]),
    "check_indices_canonical_lie_rejected": sparse("check_indices", "i32", 0, 4, 5, POOL3,
                                                   entries([0, 1, 0], order=1, honest=False), [0]),
    "csr_row_offsets_not_canonical_rejected": sparse("csr_row_offsets", "f32", 0, 4, 5, POOL3, DUPS_UNSORTED, [0]),
    "multiply_coo_unknown_algorithm_rejected": sparse("multiply_coo", "f32", 0, 4, 5, POOL3, DUPS_UNSORTED,
                                                      [0] + B4 + [253]),
    "binary_out_shape_rejected": binary("f32", "sub", [2, 3], flags=250),
    "binary_threads_33_rejected": binary("i64", "add", [2, 3], tunables=57),
    # Mixed dtypes, the new dtypes and operations, PyTorch's rule; refused: a float result into an
    # int out, bool subtract, a named kernel on mixed dtypes.
    "binary_bf16_f32_add_row_broadcast": binary("bf16", "add", [2, 3], y_mode=5, y_dtype="f32"),
    "binary_i32_true_divide_into_f64": binary("i32", "div", [5, 4]),
    "binary_bool_u8_logical_xor_torch": binary("bool", "logical_xor", [3, 4], y_dtype="u8", torch=True),
    "binary_i8_u8_remainder": binary("i8", "remainder", [6, 7], y_mode=5, y_dtype="u8"),
    "binary_f16_bf16_max_into_f64": binary("f16", "max", [2, 3], y_dtype="bf16", out_dtype="f64"),
    "binary_i64_f32_less_torch": binary("i64", "less", [4], torch=True, y_dtype="f32"),
    "binary_i64_u64_less_exact": binary("i64", "less", [4], y_dtype="u64"),
    "binary_u64_i16_equal_exact": binary("u64", "equal", [3, 4], y_mode=5, y_dtype="i16"),
    "binary_f32_i32_add_into_i32_rejected": binary("f32", "add", [2, 3], y_dtype="i32", out_dtype="i32"),
    "binary_bool_subtract_rejected": binary("bool", "sub", [3, 2]),
    "binary_mixed_named_vectorized_rejected": binary("f32", "mul", [2, 3], y_dtype="f16", kernel=3),
    # A scalar y: Python floats and ints (weak), a typed scalar; a Python int out of i8's range
    # refused under NumPy's rule, wrapped under PyTorch's.
    "binary_f16_times_python_float": binary("f16", "mul", [3, 4], scalar=("float", 8)),
    "binary_bool_times_python_float_torch": binary("bool", "mul", [3, 4], scalar=("float", 14), torch=True),
    "binary_i32_true_divide_python_int": binary("i32", "div", [2, 3], scalar=("int", 4)),
    "binary_u8_less_typed_i16_scalar": binary("u8", "less", [5], scalar=("typed", 0), y_dtype="i16"),
    "binary_i8_plus_python_int_300_torch": binary("i8", "add", [4], scalar=("int", 10), torch=True),
    "binary_i8_plus_python_int_300_rejected": binary("i8", "add", [4], scalar=("int", 10)),
    # The union: combine(op, a, b) (tail: b's mismatch byte, b, op and fills, rare byte),
    # combine(op, a, dense[, out]) (op and fills, rare, dense dtype, shape and strides bytes,
    # arena slack, out strides, where out lies: 5 exactly the dense), accumulate (op and fills,
    # rare, shape/dtype byte, strides). Rejected: mul and div, fills an integer dtype cannot
    # hold, drop_zeros on a dense result.
    "combine_coo_f32_add_dups_unsorted": sparse("combine_coo", "f32", 0, 4, 5, POOL3, DUPS_UNSORTED,
                                                [0] + B4 + union("add") + [0]),
    "combine_coo_i32_sub_fills": sparse("combine_coo", "i32", 0, 5, 4, POOL3, DUPS_UNSORTED,
                                        [0] + B4 + union("sub", 1, 0) + [0]),
    "combine_coo_f16_max_nan_fill_drop_zeros": sparse(
        "combine_coo", "f16", DROP_ZEROS, 3, 3, POOL3, entries([0, 1, 2, 0], vals=[96, 97, 20, 30]),
        [0] + B4 + union("max", 4, 3) + [0]),
    "combine_coo_i64_huge_shape_min": sparse("combine_coo", "i64", I64, "sqrt_max", "sqrt_max", POOL3,
                                             DUPS_UNSORTED, [0] + B4 + union("min", 8) + [0]),
    "combine_dense_f32_row_broadcast": sparse("combine_dense", "f32", 0, 4, 6, POOL3, DUPS_UNSORTED,
                                              union("add", 2) + [0, 0, 2, 0]),
    "combine_dense_bf16_min_inf_fill": sparse("combine_dense", "bf16", 0, 3, 5, POOL3,
                                              entries([0, 1, 2], vals=NAN_VALUES[:3]),
                                              union("min", 5) + [0, 0, 0, 0]),
    "combine_dense_out_f64_sub_apart": sparse("combine_dense_out", "f64", 0, 4, 4, POOL3, DUPS_UNSORTED,
                                              union("sub") + [0, 0, 0, 0, 0, 0, 1]),
    "combine_dense_out_i32_max_in_place": sparse("combine_dense_out", "i32", 0, 5, 3, POOL3, DUPS_UNSORTED,
                                                 union("max", 1) + [0, 0, 0, 0, 0, 0, 5]),
    "accumulate_f32_add_dups": sparse("accumulate", "f32", 0, 4, 5, POOL3, DUPS_UNSORTED, union("add") + [0]),
    "accumulate_i64_sub_reversed_rows": sparse("accumulate", "i64", I64, 6, 2, POOL3, DUPS_UNSORTED,
                                               union("sub") + [0, 0, 4, 1, 1]),
    "accumulate_i32_min_fill_half_unused": sparse("accumulate", "i32", 0, 3, 4, POOL3, DUPS_UNSORTED,
                                                  union("min", 2, 2) + [0]),
    "combine_coo_mul_rejected": sparse("combine_coo", "f32", 0, 4, 5, POOL3, DUPS_UNSORTED,
                                       [0] + B4 + union("mul") + [0]),
    "combine_coo_i64_fill_half_rejected": sparse("combine_coo", "i64", I64, 4, 5, POOL3, DUPS_UNSORTED,
                                                 [0] + B4 + union("add", None, 2) + [0]),
    "combine_dense_i32_fill_2pow31_rejected": sparse("combine_dense", "i32", 0, 4, 6, POOL3, DUPS_UNSORTED,
                                                     union("add", 8) + [0, 0, 0, 0]),
    "combine_dense_drop_zeros_rejected": sparse("combine_dense", "f32", DROP_ZEROS, 4, 6, POOL3, DUPS_UNSORTED,
                                                union("max") + [0, 0, 0, 0]),
    # Mixed value dtypes (sparse.hpp: the dense operation's result dtype, operands converted to
    # it first; outputs of that dtype): b's dtype byte 24..30 (kAllDTypes[m % 6]); a dense
    # operand's dtype byte >= 192 (kAllDTypes[m / 2 % 13]; accumulate, odd: f64 f32 i64 f16).
    "multiply_coo_f32_times_f64": sparse("multiply_coo", "f32", 0, 4, 5, POOL3, DUPS_UNSORTED, [27] + B4 + [0]),
    "combine_coo_i32_add_f32_torch": sparse("combine_coo", "i32", TORCH, 4, 5, POOL3, DUPS_UNSORTED,
                                            [26] + B4 + union("add") + [0]),
    "multiply_dense_f16_times_bf16_row": sparse("multiply_dense", "f16", 0, 4, 6, POOL3, DUPS_UNSORTED,
                                                [0, 210, 2, 0]),
    "combine_dense_out_i32_f32_into_f64": sparse("combine_dense_out", "i32", 0, 4, 4, POOL3, DUPS_UNSORTED,
                                                 union("add") + [0, 212, 0, 0, 0, 0, 0]),
    "accumulate_f64_dense_f32_coo": sparse("accumulate", "f32", 0, 4, 5, POOL3, DUPS_UNSORTED,
                                           union("add") + [0, 193]),
    "accumulate_f32_dense_f64_coo_rejected": sparse("accumulate", "f64", 0, 4, 5, POOL3, DUPS_UNSORTED,
                                                    union("add") + [0, 195]),
    # A 2^40 x 3 f64 matrix times an f32 column broadcast by stride 0: converted as the one
    # element it holds (the conversion had allocated the broadcast shape: std::bad_alloc).
    "multiply_dense_f64_huge_broadcast_f32_column": sparse("multiply_dense", "f64", I64, "2^40", 3, POOL3,
                                                           DUPS_UNSORTED, [0, 212, 4, 5, 1, 1]),
    "accumulate_div_rejected": sparse("accumulate", "f64", 0, 4, 5, POOL3, DUPS_UNSORTED, union("div") + [0]),
    "accumulate_drop_zeros_rejected": sparse("accumulate", "f32", DROP_ZEROS, 4, 5, POOL3, DUPS_UNSORTED,
                                             union("add") + [0]),
}


def write(target, name, data):
    """One corpus file, fuzz/corpus/<target>/<name>."""
    os.makedirs(os.path.join(ROOT, target), exist_ok=True)
    with open(os.path.join(ROOT, target, name), "wb") as f:
        f.write(data)


def main():
    mtx = {name: text.encode("ascii") for name, text in MTX.items()}
    for target, prefix, ext, files in (("npy", "seed-", ".npy", NPY), ("npy", "bug-", ".npy", NPY_BUGS),
                                       ("mtx", "seed-", ".mtx", mtx), ("plan", "seed-", ".bin", PLAN),
                                       ("api", "seed-", ".bin", API), ("plan", "bug-", ".bin", PLAN_BUGS)):
        for name, data in files.items():
            write(target, prefix + name + ext, data)


if __name__ == "__main__":
    main()
