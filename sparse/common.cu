// sparse/common.cu — the building blocks declared in kernels.cuh.
#include <cstring>

#include "ewise/ops.hpp"
#include "kernels.cuh"

namespace ewise::sparse_detail {

// ---- status --------------------------------------------------------------------------------

namespace {

/// Runs an index check over every entry.
__global__ void check_indices_kernel(EntryCheck check, std::int64_t n) {
  for (std::int64_t i = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x; i < n;
       i += std::int64_t{gridDim.x} * blockDim.x)
    check(i);
}

std::int64_t device_index(const void* p, IndexType t, std::int64_t k, cudaStream_t stream) {
  std::int64_t v = 0;
  const std::size_t sz = index_size(t);
  EWISE_CUDA_CHECK(cudaMemcpyAsync(&v, static_cast<const std::byte*>(p) + k * static_cast<std::int64_t>(sz),
                                   sz, cudaMemcpyDeviceToHost, stream));
  EWISE_CUDA_CHECK(cudaStreamSynchronize(stream));
  if (t == IndexType::i32) {
    std::int32_t v32;
    std::memcpy(&v32, &v, 4);
    return v32;
  }
  return v;
}

}  // namespace

Status::Status(cudaStream_t stream)
    : stream_(stream), words_(sizeof(host_), stream) {
  EWISE_CUDA_CHECK(cudaMemsetAsync(words_.data(), 0xFF, sizeof(host_), stream));
}

EntryCheck Status::fused(const CooView& m, const char* what, bool enabled) {
  if (!enabled || m.desc.nnz == 0) return EntryCheck{};
  EWISE_EXPECTS(nchecked_ < kChecks, "sparse status: too many checks");
  const int slot = nchecked_++;
  checked_[slot] = m;
  what_[slot] = what;
  return check_of(slot);
}

EntryCheck Status::check_of(int slot) const {
  const CooView& m = checked_[slot];
  EntryCheck c;
  c.rows = index_array(m.rows, m.desc.index);
  c.cols = index_array(m.cols, m.desc.index);
  c.nrows = m.desc.nrows;
  c.ncols = m.desc.ncols;
  c.canonical = m.desc.canonical;
  // Words no check has set stay all ones (-1 as int64).
  c.words = static_cast<unsigned long long*>(const_cast<void*>(words_.data())) + 2 * slot;
  return c;
}

void Status::check(const CooView& m, const char* what, bool enabled) {
  const EntryCheck c = fused(m, what, enabled);
  if (c.words == nullptr) return;
  detail::launch("sparse check_indices", check_indices_kernel, dim3(blocks_for(m.desc.nnz)),
                 dim3(kBlock), 0, stream_, c, m.desc.nnz);
}

std::int64_t* Status::total_slot(int i) const {
  return static_cast<std::int64_t*>(const_cast<void*>(words_.data())) + 2 * kChecks + i;
}

void Status::recheck() {
  for (int s = 0; s < nchecked_; ++s)
    detail::launch("sparse check_indices", check_indices_kernel, dim3(blocks_for(checked_[s].desc.nnz)),
                   dim3(kBlock), 0, stream_, check_of(s), checked_[s].desc.nnz);
  read();
}

void Status::read() {
  const std::vector<std::int64_t> w =
      read_words(static_cast<const std::int64_t*>(words_.data()), 2 * kChecks + kTotals, stream_);
  std::copy(w.begin(), w.end(), host_);
  for (int s = 0; s < nchecked_; ++s) {
    const CooView& m = checked_[s];
    const auto at = [&](std::int64_t k, const void* p) { return device_index(p, m.desc.index, k, stream_); };
    if (const std::int64_t k = host_[2 * s]; k >= 0)
      throw_out_of_range(what_[s], m.desc, k, at(k, m.rows), at(k, m.cols));
    if (const std::int64_t k = host_[2 * s + 1]; k >= 0)
      throw_not_increasing(what_[s], k, at(k - 1, m.rows), at(k - 1, m.cols), at(k, m.rows),
                           at(k, m.cols));
  }
}

// ---- compaction ----------------------------------------------------------------------------

Compaction::Compaction(std::int64_t n, cudaStream_t stream)
    : tiles_(tiles_for(n)), tiling_{n}, stream_(stream) {
  const auto words = static_cast<std::size_t>(tiles_ + 1) * sizeof(std::int64_t);
  ws_ = Workspace({words, words, exclusive_sum_temp_bytes(tiles_ + 1)}, stream_);
  // The entry past the last tile counts nothing, so the scan ends with the total.
  EWISE_CUDA_CHECK(cudaMemsetAsync(counts() + tiles_, 0, sizeof(std::int64_t), stream_));
}

void Compaction::scan(Status& status, int slot) {
  auto* offsets = ws_.get<std::int64_t>(1);
  exclusive_sum(ws_.get(2), ws_.bytes(2), counts(), offsets, tiles_ + 1, stream_);
  EWISE_CUDA_CHECK(cudaMemcpyAsync(status.total_slot(slot), offsets + tiles_, sizeof(std::int64_t),
                                   cudaMemcpyDeviceToDevice, stream_));
}

std::int64_t Compaction::scan_total(Status& status, int slot) {
  scan(status, slot);
  status.read();
  return status.total(slot);
}

// ---- sorted sequences ----------------------------------------------------------------------

namespace {

__global__ void make_keys_kernel(KeySeq in, std::int64_t n, WordArray keys, WordArray perm,
                                 EntryCheck check) {
  for (std::int64_t i = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x; i < n;
       i += std::int64_t{gridDim.x} * blockDim.x) {
    check(i);
    keys.set(i, in[i]);
    if (perm.p) perm.set(i, static_cast<std::uint64_t>(i));
  }
}

}  // namespace

SortedSeq sort_entries(const CooView& m, const EntryCheck& check, cudaStream_t stream) {
  const std::int64_t n = m.desc.nnz;
  SortedSeq s;
  s.keys = implicit_keys(m);
  s.n = n;
  if (m.desc.canonical || n == 0) {
    s.unique = true;
    return s;
  }
  const bool wk = wide_keys(m.desc), wp = static_cast<std::uint64_t>(n) > 0xFFFFFFFFull;
  const int bits = key_bits(m.desc);
  const auto kb = static_cast<std::size_t>(n) * (wk ? 8 : 4), pb = static_cast<std::size_t>(n) * (wp ? 8 : 4);
  s.ws = Workspace({kb, kb, pb, pb, sort_pairs_temp_bytes(n, wk, wp ? 8 : 4, bits)}, stream);
  SortBuffers buf;
  buf.keys[0] = s.ws.get(0);
  buf.keys[1] = s.ws.get(1);
  buf.vals[0] = s.ws.get(2);
  buf.vals[1] = s.ws.get(3);
  detail::launch("sparse make_keys", make_keys_kernel, dim3(blocks_for(n)), dim3(kBlock), 0, stream,
                 s.keys, n, WordArray{buf.keys[0], wk}, WordArray{buf.vals[0], wp}, check);
  sort_pairs(s.ws.get(4), s.ws.bytes(4), buf, n, wk, wp ? 8 : 4, bits, stream);
  s.keys.keys = {buf.keys[buf.selector], wk};
  s.perm = {buf.vals[buf.selector], wp};
  return s;
}

SortedSeq storage_keys(const CooView& m, cudaStream_t stream) {
  const std::int64_t n = m.desc.nnz;
  SortedSeq s;
  s.keys = implicit_keys(m);
  s.n = n;
  s.unique = s.sorted = m.desc.canonical || n == 0;
  if (s.unique) return s;
  const bool wk = wide_keys(m.desc);
  s.ws = Workspace({static_cast<std::size_t>(n) * (wk ? 8 : 4)}, stream);
  detail::launch("sparse make_keys", make_keys_kernel, dim3(blocks_for(n)), dim3(kBlock), 0, stream,
                 s.keys, n, WordArray{s.ws.get(0), wk}, WordArray{}, EntryCheck{});
  s.keys.keys = {s.ws.get(0), wk};
  return s;
}

// ---- finalize ------------------------------------------------------------------------------

namespace {

template <class T>
__global__ void finalize_kernel(FinalizeArgs a) {
  for (std::int64_t u = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x; u < a.nout;
       u += std::int64_t{gridDim.x} * blockDim.x) {
    const std::int64_t j = a.heads ? a.heads[u] : u;
    std::int64_t p = 0;
    if (a.factor == Factor::sparse) {
      const std::int64_t q = a.qperm.p ? static_cast<std::int64_t>(a.qperm[j]) : j;
      p = a.matchpos[a.match_index == MatchIndex::storage ? q : j];
    }
    finalize_entry<T>(a, u, j, p);
  }
}

}  // namespace

void finalize(const FinalizeArgs& args, DType dtype, cudaStream_t stream) {
  if (args.nout == 0) return;
  detail::dispatch_dtype(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    detail::launch("sparse finalize", finalize_kernel<T>, dim3(blocks_for(args.nout)), dim3(kBlock),
                   0, stream, args);
  });
}

Runs find_runs(const CooView& m, bool validate, Status& status, cudaStream_t stream) {
  Runs r;
  if (m.desc.canonical || m.desc.nnz == 0) {  // no pass over the entries: check on its own
    status.check(m, "a", validate);
    r.seq = sort_entries(m, EntryCheck{}, stream);
  } else {  // the sort's first pass checks
    r.seq = sort_entries(m, status.fused(m, "a", validate), stream);
  }
  if (r.seq.unique) {
    status.read();
    r.nout = m.desc.nnz;
    return r;
  }
  Compaction heads(m.desc.nnz, stream);
  heads.count(RunHeads{r.seq.keys, nullptr});
  r.nout = heads.scan_total(status, 0);
  r.heads_ws = Workspace({static_cast<std::size_t>(r.nout) * sizeof(std::int64_t)}, stream);
  auto* out = r.heads_ws.get<std::int64_t>(0);
  heads.write(RunHeads{r.seq.keys, out});
  r.heads = out;
  return r;
}

FinalizeArgs finalize_args(const CooView& m, const Runs& runs) {
  FinalizeArgs a;
  a.nout = runs.nout;
  a.heads = runs.heads;
  a.qkeys = runs.seq.keys;
  a.qperm = runs.seq.perm;
  a.nq = runs.seq.n;
  a.q_unique = runs.seq.unique;
  a.qrows = index_array(m.rows, m.desc.index);
  a.qcols = index_array(m.cols, m.desc.index);
  a.qvals = m.vals;
  a.ncols = static_cast<std::uint64_t>(m.desc.ncols);
  return a;
}

// ---- dropping zeros ------------------------------------------------------------------------

namespace {

template <class T>
struct NonzeroEntries {
  IndexArray rows, cols;
  const T* vals;
  IndexArray out_rows, out_cols;
  T* out_vals;
  __device__ bool flag(std::int64_t i) const {
    return detail::to_compute(vals[i]) != detail::compute_t<T>(0);
  }
  __device__ void write(std::int64_t i, std::int64_t slot) const {
    out_rows.set(slot, rows[i]);
    out_cols.set(slot, cols[i]);
    out_vals[slot] = vals[i];
  }
};

}  // namespace

DeviceCoo drop_zero_entries(DeviceCoo in, Status& status, cudaStream_t stream) {
  const CooDesc& d = in.desc();
  if (d.nnz == 0) return in;
  return detail::dispatch_dtype(d.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    NonzeroEntries<T> op{index_array(in.rows(), d.index), index_array(in.cols(), d.index),
                         static_cast<const T*>(in.vals()), {}, {}, nullptr};
    Compaction c(d.nnz, stream);
    c.count(op);
    const std::int64_t n = c.scan_total(status, 3);
    if (n == d.nnz) return std::move(in);
    DeviceCoo out(result_desc(d, n), stream);
    op.out_rows = index_array(out.rows(), d.index);
    op.out_cols = index_array(out.cols(), d.index);
    op.out_vals = static_cast<T*>(out.vals());
    c.write(op);
    return out;
  });
}

}  // namespace ewise::sparse_detail
