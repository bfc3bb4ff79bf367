// bench/suites.hpp — the suites of ewise_bench. Each returns its cases; Bench::run_suite runs them.
#pragma once

#include <vector>

#include "harness.hpp"

namespace ewise::bench {

/// Paper Figs 6-8: baseline, sliding, sliding_shared, general (and automatic) for a vector over
/// a matrix, vector length and the matrix's second dimension swept.
std::vector<Case> paper_suite(Bench& bench);
/// d2ltvm: broadcast add (n,1)+(n,n), continuous vs alternate vs automatic, nt and nb swept.
std::vector<Case> schedules_suite(Bench& bench);
/// The dense issue's eight broadcast patterns, every kernel that accepts them, 4 dtypes.
std::vector<Case> patterns_suite(Bench& bench);
std::vector<Case> ml_shapes_suite(Bench& bench);
/// Small tensors: ewise's host cost per call (CPU clock over 20,000 calls) beside a bare launch,
/// and a 1M-element broadcast's GPU time against cub and the peers.
std::vector<Case> small_suite(Bench& bench);
/// COO multiply by algorithm, unsorted and canonical inputs, plus COO ⊙ dense.
std::vector<Case> sparse_suite(Bench& bench);
/// Dense multiply vs COO multiply of the same shape as density grows.
std::vector<Case> crossover_suite(Bench& bench);
/// Issue 13's four structure kinds (power-law graph, wide matrix, bag of words, pruning mask;
/// coo_kinds.hpp), >= 10M entries each: COO ⊙ COO, COO ⊙ dense and multiply_values, in both
/// call patterns, with bytes moved; inputs written for bench/peers.py with --inputs.
std::vector<Case> structures_suite(Bench& bench);
/// Issue 14's union operations on structure kinds (uniform mask, embedding gradient, words,
/// graph), >= 10M entries each: combine(add, COO, COO), accumulate(add, dense, COO) and
/// combine(add, COO, dense), in both call patterns, with bytes moved; inputs written for
/// bench/peers.py with --inputs.
std::vector<Case> union_suite(Bench& bench);

/// Issue 34's mixed dtypes and scalar operands: hot pairs, scalar forms beside 0-d tensors,
/// in-place use with a wider operand, against the same-dtype cub add of the output's dtype.
std::vector<Case> mixed_suite(Bench& bench);
/// Issue 35's row-sparse operations at an embedding gradient's shape (2^20 x 64 f32, 262,144
/// Zipf ids, natural and canonical): accumulate, combine, coalesce and row scaling, in both
/// call patterns, verified against the CPU backend.
std::vector<Case> rows_suite(Bench& bench);
}  // namespace ewise::bench
