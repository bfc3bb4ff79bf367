// bench/coo_kinds.hpp — the structure kinds of issues 13 and 14 (four for "sparse that wins where
// users call it", the embedding gradient for the union operations), drawn on the device, and a
// device oracle for products and sums is coo_oracle.hpp).
//
// Every kind is drawn from a seed alone (counter-based hashes of src/random.hpp: entry or cell i
// of a draw with seed s depends only on (s, i)), f32 values from the harness's random values
// (uniform in [-4, 4], |x| >= 1/16, never zero), i32 indices. Each kind comes as a pair (a, b):
// b is a related matrix of the same kind, so that a ⊙ b has real matches. The sizes per
// KindSize are in coo_kinds.cu (kind_shape); the full sizes:
//
//   graph  power-law graph with duplicate edges, the edge list as it comes: R-MAT (Graph500's
//          a, b, c, d = 0.57, 0.19, 0.19, 0.05, without its per-level noise) on 2^20 nodes,
//          2^24 edges (Graph500's scale 20, edge factor 16) drawn independently, so duplicates
//          (~4%) and self loops occur as in Graph500's generator; vertex ids scrambled by a
//          fixed bijection, entries in draw order (unsorted). b is the next snapshot: edge k of
//          b is, with probability 0.8, a's edge sigma(k) (sigma a fixed bijection of the edge
//          numbers, so b's order is not a's), else a fresh R-MAT edge.
//   wide   4096 x 2^24, canonical (row-major sorted, no duplicates): row r holds each column
//          with probability p_r (columns drawn by geometric gaps), p_r log-normal (sigma 1)
//          around a mean of 2930 entries a row (~11.8M entries, 51 to 48k a row), capped at 32x
//          the mean. b keeps each entry of a with probability 1/2 and adds fresh entries at half
//          of row r's density (~50% of a's entries match).
//   words  bag of words, 1,000,000 documents x 2^17 words, the token stream as it comes: doc d
//          has 1 + floor(exp(N(ln 8, 0.8))) tokens (mean ~12, at most 512), each word drawn
//          from a Zipf law (exponent 1.07) over the vocabulary, word ids a fixed bijection of
//          the popularity rank; entries sorted by document, in token order within one
//          (duplicates: a word repeated in a document, ~11%; ~11.5M entries). b is a second
//          draw of the same law (~1M coordinates in both, mostly the popular words).
//   mask   a uniform 10% pruning mask over an 8192 x 12288 weight matrix, canonical: every
//          cell kept independently with probability 0.1 (coo_gen.hpp's generator). b is a
//          second draw (1% of cells in both).
//   embedding  the sparse gradient of a 2^20 x 64 embedding table (as PyTorch's sparse
//          embedding gradient stores it): 2^18 tokens, each token's row drawn from a Zipf law
//          (exponent 1.07) over the rows, row ids a fixed bijection of the popularity rank;
//          every token contributes its row's 64 entries (columns 0..63) in token order, so rows
//          repeat (duplicates) and come unsorted (~16.8M entries). b is a second draw (the next
//          batch). Its dense table (256 MiB) fits in memory, unlike words' or graph's.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <string>

#include "ewise/buffer.hpp"
#include "ewise/coo.hpp"
#include "ewise/tensor.hpp"

namespace ewise::bench {

enum class Kind { graph, wide, words, mask, embedding };
const char* kind_name(Kind k);  ///< "graph", "wide", "words", "mask", "embedding"

/// full: the benchmark's sizes (>= 10M entries); quick: --quick; check: ~100k entries, for the
/// CPU reference.
enum class KindSize { full, quick, check };

/// A drawn pair in the kind's natural form (graph, words, embedding: not canonical, with
/// duplicates; wide, mask: canonical).
struct KindPair {
  DeviceCoo a, b;
  std::string description;  ///< the kind's parameters at this size, one line
};

KindPair generate_kind(Kind kind, KindSize size, std::uint64_t seed, cudaStream_t stream);

}  // namespace ewise::bench
