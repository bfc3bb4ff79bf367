// tests/testing/compressed.hpp — CSR and CSC operands and their oracle for the host and GPU
// tests (test_compressed_host.cpp, test_compressed.cu). A compressed operand is made from a COO
// matrix by a stable counting sort on its major index written here, so each slice keeps the
// COO's storage order (duplicates summed in the same order: bit-identical sums); the oracle of
// an operation on compressed operands is the same operation on the COO matrices (the COO CPU
// backend, itself checked against the dense reference in test_sparse_host.cpp), compressed the
// same way.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "ewise/compressed.hpp"
#include "ewise/coo.hpp"
#include "ewise/error.hpp"

namespace ewise::test {

inline std::int64_t read_index(const void* p, IndexType t, std::int64_t k) {
  if (t == IndexType::i32) return static_cast<const std::int32_t*>(p)[k];
  return static_cast<const std::int64_t*>(p)[k];
}
inline void write_index(void* p, IndexType t, std::int64_t k, std::int64_t v) {
  if (t == IndexType::i32)
    static_cast<std::int32_t*>(p)[k] = static_cast<std::int32_t>(v);
  else
    static_cast<std::int64_t*>(p)[k] = v;
}

/// a (host) in `format`, each slice in a's storage order; canonical when a is marked so (a
/// row-major sorted matrix without duplicates has sorted, duplicate-free slices either way).
inline HostCompressed compressed_from(const CooView& a, SparseFormat format) {
  const CooDesc& d = a.desc;
  const bool csr = format == SparseFormat::csr;
  const std::int64_t nmajor = csr ? d.nrows : d.ncols, nnz = d.nnz;
  const std::size_t isz = index_size(d.index), vsz = dtype_size(d.dtype);
  HostBuffer offsets(static_cast<std::size_t>(nmajor + 1) * isz), indices(nnz * isz),
      vals(nnz * vsz);
  std::vector<std::int64_t> start(static_cast<std::size_t>(nmajor + 1), 0);
  const void* majors = csr ? a.rows : a.cols;
  const void* minors = csr ? a.cols : a.rows;
  for (std::int64_t k = 0; k < nnz; ++k) ++start[read_index(majors, d.index, k) + 1];
  for (std::int64_t m = 0; m < nmajor; ++m) start[m + 1] += start[m];
  for (std::int64_t m = 0; m <= nmajor; ++m) write_index(offsets.data(), d.index, m, start[m]);
  for (std::int64_t k = 0; k < nnz; ++k) {
    const std::int64_t slot = start[read_index(majors, d.index, k)]++;
    write_index(indices.data(), d.index, slot, read_index(minors, d.index, k));
    std::memcpy(static_cast<char*>(vals.data()) + slot * vsz,
                static_cast<const char*>(a.vals) + k * vsz, vsz);
  }
  return HostCompressed(d, format, std::move(offsets), std::move(indices), std::move(vals));
}

/// A device copy of a host compressed matrix (synchronous).
inline DeviceCompressed to_device(const CompressedView& h) {
  const std::size_t isz = index_size(h.desc.index);
  const std::size_t ob = (h.major_extent() + 1) * isz, ib = h.desc.nnz * isz,
                    vb = h.desc.nnz * dtype_size(h.desc.dtype);
  DeviceBuffer offsets(ob), indices(ib), vals(vb);
  EWISE_CUDA_CHECK(cudaMemcpy(offsets.data(), h.offsets, ob, cudaMemcpyHostToDevice));
  if (ib) EWISE_CUDA_CHECK(cudaMemcpy(indices.data(), h.indices, ib, cudaMemcpyHostToDevice));
  if (vb) EWISE_CUDA_CHECK(cudaMemcpy(vals.data(), h.vals, vb, cudaMemcpyHostToDevice));
  return DeviceCompressed(h.desc, h.format, std::move(offsets), std::move(indices),
                          std::move(vals));
}

/// A host copy of a compressed matrix (synchronous; host views are copied too).
inline HostCompressed to_host(const CompressedView& v) {
  const std::size_t isz = index_size(v.desc.index);
  const std::size_t ob = (v.major_extent() + 1) * isz, ib = v.desc.nnz * isz,
                    vb = v.desc.nnz * dtype_size(v.desc.dtype);
  HostBuffer offsets(ob), indices(ib), vals(vb);
  const cudaMemcpyKind kind =
      v.memory == Memory::device ? cudaMemcpyDeviceToHost : cudaMemcpyHostToHost;
  const std::pair<void*, const void*> parts[] = {
      {offsets.data(), v.offsets}, {indices.data(), v.indices}, {vals.data(), v.vals}};
  const std::size_t sizes[] = {ob, ib, vb};
  for (int i = 0; i < 3; ++i) {
    if (sizes[i] == 0) continue;
    if (kind == cudaMemcpyHostToHost)
      std::memcpy(parts[i].first, parts[i].second, sizes[i]);
    else
      EWISE_CUDA_CHECK(cudaMemcpy(parts[i].first, parts[i].second, sizes[i], kind));
  }
  return HostCompressed(v.desc, v.format, std::move(offsets), std::move(indices), std::move(vals));
}

/// "" when got (host) holds exactly want's arrays (format, shape, nnz, index type, dtype, the
/// canonical mark, every byte of offsets, indices and values), else what differs first.
inline std::string compressed_difference(const CompressedView& got, const CompressedView& want) {
  if (got.format != want.format) return "format differs";
  if (got.desc.str() != want.desc.str())
    return "descriptor " + got.desc.str() + ", want " + want.desc.str();
  const std::size_t isz = index_size(want.desc.index);
  const std::size_t sizes[] = {(want.major_extent() + 1) * isz, want.desc.nnz * isz,
                               want.desc.nnz * dtype_size(want.desc.dtype)};
  const void* g[] = {got.offsets, got.indices, got.vals};
  const void* w[] = {want.offsets, want.indices, want.vals};
  const char* names[] = {"offsets", "indices", "values"};
  for (int i = 0; i < 3; ++i)
    if (sizes[i] && std::memcmp(g[i], w[i], sizes[i]) != 0)
      return std::string(names[i]) + " differ";
  return "";
}

}  // namespace ewise::test
