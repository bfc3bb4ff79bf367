// Mixed dtypes and scalar operands (issue 34): large contiguous operands of the pairs ML code
// mixes, scalar forms beside the same op with a broadcast 0-d tensor, in-place use with a wider
// operand. Bytes: the unique bytes of both inputs and the output; the cub reference is the
// same-dtype add of the output's size and dtype (Bench::add).
#include <cstring>
#include <string>
#include <vector>

#include "check.hpp"
#include "ewise/dense.hpp"
#include "ewise/error.hpp"
#include "ewise/verify.hpp"
#include "suites.hpp"

namespace ewise::bench {

namespace {

/// b: a tensor of b_dtype, a 0-d tensor of it, or a scalar.
enum class BForm { tensor, zero_dim, scalar };

struct MixedSpec {
  std::string name;
  BinaryOp op = BinaryOp::add;
  DType a = DType::f32, b = DType::f32;
  BForm form = BForm::tensor;
  Promotion rule = Promotion::numpy;
  bool in_place = false;  ///< out is a (of a's dtype)
  double value = 0.5;     ///< a floating scalar's value (an integer one is 3)
  bool positive_a = false;  ///< a's values in [1/16, 4] (power's bases), else [-4, 4]
};

const char* form_name(BForm f) {
  return f == BForm::tensor ? "tensor" : f == BForm::zero_dim ? "zero_dim" : "scalar";
}

/// The scalar of a case: its value for floats (a weak Python float), 3 for integers, true for
/// bool.
Scalar scalar_of(const MixedSpec& s) {
  if (s.b == DType::b8) return Scalar::weak_bool(true);
  return is_floating(s.b) ? Scalar::weak_float(s.value) : Scalar::weak_int(3);
}

/// Whether two contiguous device views hold the same bytes.
bool same_bytes(const ConstTensorView& x, const ConstTensorView& y, cudaStream_t stream) {
  const HostTensor hx = to_host(x, stream), hy = to_host(y, stream);
  return hx.bytes() == hy.bytes() && std::memcmp(hx.data(), hy.data(), hx.bytes()) == 0;
}

void run_case(Bench& bench, const MixedSpec& s, std::int64_t n) {
  const cudaStream_t stream = bench.stream();
  DenseOptions options;
  options.promotion = s.rule;
  const OperandType bt = s.form == BForm::scalar ? scalar_of(s).type() : OperandType{s.b};
  const OpTypes types = op_types(s.op, s.rule, {s.a}, bt);
  const DType out_t = s.in_place ? s.a : types.result;
  const std::int64_t nb = s.form == BForm::tensor ? n : 1;
  const double bytes = static_cast<double>(n) * dtype_size(s.a) +
                       (s.form == BForm::scalar ? 0.0 : static_cast<double>(nb) * dtype_size(s.b)) +
                       static_cast<double>(n) * dtype_size(out_t);
  const int sets = bench.sets_for(static_cast<std::size_t>(bytes), 64);
  const verify::GenOptions positive{0.0625, 4.0};
  const Arena a(s.a, n, sets, true, bench.next_seed(), stream,
                s.positive_a ? positive : verify::GenOptions{});
  const Arena b(s.b, nb, sets, true, bench.next_seed(), stream);
  const Arena out(out_t, n, sets, false, 0, stream);
  const TensorDesc ad = TensorDesc::contiguous(s.a, {n});
  const TensorDesc bd = TensorDesc::contiguous(s.b, s.form == BForm::tensor ? Dims{n} : Dims{});
  const TensorDesc od = TensorDesc::contiguous(out_t, {n});
  const auto av = [&](std::int64_t i) { return ConstTensorView(a.at(i), ad, Memory::device); };
  const auto ov = [&](std::int64_t i) {
    return TensorView{s.in_place ? a.at(i) : out.at(i), od, Memory::device};
  };
  const auto bop = [&](std::int64_t i) -> Operand {
    if (s.form == BForm::scalar) return scalar_of(s);
    return ConstTensorView(b.at(i), bd, Memory::device);
  };
  Record r;
  r.suite = "mixed";
  r.name = s.name;
  r.impl = "automatic";
  r.dtype = dtype_name(out_t);
  r.params = {param("op", op_name(s.op)), param("a", dtype_name(s.a)), param("b", dtype_name(s.b)),
              param("b_form", form_name(s.form)), param("promotion", promotion_name(s.rule)),
              param("in_place", s.in_place), param("n", n)};
  r.bytes = bytes;
  try {
    if (s.in_place) {  // verified out of place on a copy of a's first set: same kernel, same pass
      const Arena ref(out_t, n, 1, false, 0, stream);
      const TensorView rv{ref.at(0), od, Memory::device};
      verify::poison(rv, stream);
      binary(s.op, av(0), bop(0), rv, options, stream);
      binary(s.op, av(0), bop(0), ov(0), options, stream);
      EWISE_EXPECTS(same_bytes(rv, ov(0), stream), "in place differs from out of place");
      r.verified = "in place == out of place";
    } else if (s.form == BForm::scalar) {  // the scalar form equals the 0-d tensor form
      const Arena zero(s.b, 1, 1, false, 0, stream);
      const Scalar sc = scalar_of(s);
      // The scalar as a 0-d tensor of b's dtype holds the same value (the cases' values, 3 and
      // true are exact).
      HostTensor h(s.b, {});
      std::memset(h.data(), 0, h.bytes());
      verify::fill_random(h.view(), 0, {sc.as_double(), sc.as_double(), true, 0});
      EWISE_CUDA_CHECK(cudaMemcpyAsync(zero.at(0), h.data(), h.bytes(), cudaMemcpyHostToDevice,
                                       stream));
      const ConstTensorView zv(zero.at(0), TensorDesc::contiguous(s.b, {}), Memory::device);
      verify::poison(ov(0), stream);
      binary(s.op, av(0), zv, ov(0), options, stream);
      r.verified = verify_dense(s.op, av(0), zv, ov(0), bench.next_seed(), stream, s.rule);
      const Arena first(out_t, n, 1, false, 0, stream);
      const TensorView fv{first.at(0), od, Memory::device};
      EWISE_CUDA_CHECK(cudaMemcpyAsync(fv.data, ov(0).data, static_cast<std::size_t>(n) * dtype_size(out_t),
                                       cudaMemcpyDeviceToDevice, stream));
      verify::poison(ov(0), stream);
      binary(s.op, av(0), bop(0), ov(0), options, stream);
      EWISE_EXPECTS(same_bytes(fv, ov(0), stream), "the scalar form differs from the 0-d tensor's");
      r.verified += ", scalar == 0-d tensor";
    } else {
      verify::poison(ov(0), stream);
      binary(s.op, av(0), bop(0), ov(0), options, stream);
      r.verified = verify_dense(s.op, av(0), ConstTensorView(b.at(0), bd, Memory::device), ov(0),
                                bench.next_seed(), stream, s.rule);
    }
  } catch (const Error& e) {
    bench.add_untimed(std::move(r), "failed", e.what());
    return;
  }
  r.stats = bench.time([&](std::int64_t i) { binary(s.op, av(i), bop(i), ov(i), options, stream); },
                       sets);
  bench.add(std::move(r), n);
}

}  // namespace

std::vector<Case> mixed_suite(Bench& bench) {
  const std::int64_t n = bench.quick() ? (std::int64_t{1} << 22) : (std::int64_t{1} << 26);
  using D = DType;
  const BinaryOp add = BinaryOp::add, mul = BinaryOp::multiply;
  std::vector<MixedSpec> specs = {
      {"bf16+f32", add, D::bf16, D::f32},
      {"f16+f32", add, D::f16, D::f32},
      {"f32+f64", add, D::f32, D::f64},
      {"i32+f32 numpy", add, D::i32, D::f32},
      {"i32+f32 torch", add, D::i32, D::f32, BForm::tensor, Promotion::torch},
      {"i64+f32 torch", add, D::i64, D::f32, BForm::tensor, Promotion::torch},
      {"bool*f32", mul, D::f32, D::b8},
      {"u8+u8", add, D::u8, D::u8},
      {"i8*i8", mul, D::i8, D::i8},
      {"f32/i32", BinaryOp::divide, D::f32, D::i32},
      {"i32/i32", BinaryOp::divide, D::i32, D::i32},
      {"f32>f32", BinaryOp::greater, D::f32, D::f32},
      {"f32 floor_divide", BinaryOp::floor_divide, D::f32, D::f32},
      {"u8&u8", BinaryOp::bitwise_and, D::u8, D::u8},
      {"bf16+=f32", add, D::bf16, D::f32, BForm::tensor, Promotion::torch, true},
  };
  for (const D t : {D::f32, D::bf16, D::f16, D::i32}) {
    const std::string tn = dtype_name(t);
    specs.push_back({tn + "*scalar", mul, t, t, BForm::scalar});
    specs.push_back({tn + "*0-d", mul, t, t, BForm::zero_dim});
  }
  specs.push_back({"f32>scalar", BinaryOp::greater, D::f32, D::f64, BForm::scalar});
  // power: the f32 compute type's evaluation (pow_f32.hpp): tensor exponents, small integer ones
  // (x ** 3, x ** 4, x ** -2), x ** 2, x ** ±0.5 and a fractional one; 16-bit floats, and pairs of
  // dtypes into an f32 result (power.cuh's kernel)
  const BinaryOp pow = BinaryOp::power;
  const Promotion np = Promotion::numpy;
  specs.push_back({"f32**f32", pow, D::f32, D::f32, BForm::tensor, np, false, 0.5, true});
  specs.push_back({"f32**3", pow, D::f32, D::f32, BForm::scalar, np, false, 3.0});
  specs.push_back({"f32**4", pow, D::f32, D::f32, BForm::scalar, np, false, 4.0});
  specs.push_back({"f32**2", pow, D::f32, D::f32, BForm::scalar, np, false, 2.0});
  specs.push_back({"f32**-2", pow, D::f32, D::f32, BForm::scalar, np, false, -2.0, true});
  specs.push_back({"f32**0.7", pow, D::f32, D::f32, BForm::scalar, np, false, 0.7, true});
  specs.push_back({"f32**0.5", pow, D::f32, D::f32, BForm::scalar, np, false, 0.5, true});
  specs.push_back({"f32**-0.5", pow, D::f32, D::f32, BForm::scalar, np, false, -0.5, true});
  // (PyTorch's rule: under NumPy's a Python float makes bf16's result f32, a 0-d bf16 tensor not)
  specs.push_back({"bf16**3", pow, D::bf16, D::bf16, BForm::scalar, Promotion::torch, false, 3.0});
  specs.push_back({"bf16**-3", pow, D::bf16, D::bf16, BForm::scalar, Promotion::torch, false, -3.0, true});
  specs.push_back({"f16**-2", pow, D::f16, D::f16, BForm::scalar, Promotion::torch, false, -2.0, true});
  specs.push_back({"bf16**0.5", pow, D::bf16, D::bf16, BForm::scalar, Promotion::torch, false, 0.5, true});
  specs.push_back({"bf16**-0.5", pow, D::bf16, D::bf16, BForm::scalar, Promotion::torch, false, -0.5, true});
  specs.push_back({"f16**-0.5", pow, D::f16, D::f16, BForm::scalar, Promotion::torch, false, -0.5, true});
  specs.push_back({"bf16**bf16", pow, D::bf16, D::bf16, BForm::tensor, Promotion::torch, false, 0.5, true});
  specs.push_back({"bf16**f32", pow, D::bf16, D::f32, BForm::tensor, np, false, 0.5, true});
  specs.push_back({"f16**f32", pow, D::f16, D::f32, BForm::tensor, np, false, 0.5, true});
  specs.push_back({"f32**bf16", pow, D::f32, D::bf16, BForm::tensor, np, false, 0.5, true});
  specs.push_back({"bf16**f32_0-d", pow, D::bf16, D::f32, BForm::zero_dim, np, false, 0.5, true});
  std::vector<Case> cases;
  for (const MixedSpec& s : specs)
    cases.push_back({s.name, [&bench, s, n] { run_case(bench, s, n); }});
  return cases;
}

}  // namespace ewise::bench
