// Internal to models/kernels: the builder the kernel lists (transformer_kernels.cpp,
// resnet50_kernels.cpp) append their kernels with.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "engine/kernels.hpp"
#include "models/hardware.hpp"
#include "models/kernels/kernel_families.hpp"

namespace clustersim::models::kernels::detail {

using engine::Kernel;
using engine::KernelKind;

// Appends kernels with interned names and the config's dtype. In fp8 training (Transformer
// Engine) only the GEMMs run in fp8: attention, norms and elementwise kernels run, and
// activations are stored, in bf16 (NVIDIA Transformer Engine documentation, "Using FP8").
class Emitter {
 public:
  Emitter(engine::KernelTable& names, Precision dtype)
      : names_(names),
        gemm_dtype_(static_cast<std::uint8_t>(dtype)),
        dtype_(static_cast<std::uint8_t>(dtype == Precision::fp8 ? Precision::bf16 : dtype)) {}

  void gemm(std::string_view name, double m, double n, double k, double batch, bool ta, bool tb,
            double elem) {
    Kernel g;
    g.kind = KernelKind::gemm;
    g.m = static_cast<std::uint64_t>(m);
    g.n = static_cast<std::uint64_t>(n);
    g.k = static_cast<std::uint64_t>(k);
    g.batch = static_cast<std::uint64_t>(batch);
    g.trans_a = ta;
    g.trans_b = tb;
    const double dm = static_cast<double>(g.m), dn = static_cast<double>(g.n),
                 dk = static_cast<double>(g.k), db = static_cast<double>(g.batch);
    g.flops = 2.0 * dm * dn * dk * db;
    g.bytes = (dm * dk + dk * dn + dm * dn) * elem * db;
    push(name, g);
    out_.back().dtype = gemm_dtype_;
  }
  void memory(std::string_view name, double bytes, double flops = 0) {
    Kernel k;
    k.kind = KernelKind::memory;
    k.bytes = bytes;
    k.flops = flops;
    push(name, k);
  }
  // flash1: FlashAttention 1.x's kernel (kernel_cost.hpp is_flash1).
  void attention(std::string_view name, bool forward, double s_q, double s_k, double d,
                 double batch, bool causal, double flops, double bytes, bool flash1 = false) {
    Kernel k;
    k.kind = forward ? KernelKind::attention_fwd : KernelKind::attention_bwd;
    k.m = static_cast<std::uint64_t>(s_q);
    k.n = static_cast<std::uint64_t>(s_k);
    k.k = static_cast<std::uint64_t>(d);
    k.batch = static_cast<std::uint64_t>(batch);
    k.causal = causal;
    k.variant = flash1 ? kFlash1Variant : 0;
    k.flops = flops;
    k.bytes = bytes;
    push(name, k);
  }
  // Without gradient-accumulation fusion each weight gradient is a fresh tensor of the GEMM's
  // dtype that one more kernel adds into the main gradient: read both, write the main gradient.
  // `cast_first`: a cast kernel first writes it in the main gradient's dtype, and the add reads
  // that copy (DeepSpeed's BF16_Optimizer: transformer_kernels.hpp cast_main_grad).
  void accumulate_grads_separately(double main_grad_bytes, bool cast_first = false) {
    main_grad_bytes_ = main_grad_bytes;
    cast_first_ = cast_first;
  }
  void wgrad_accumulate(const std::string& name, double params, double elem) {
    if (main_grad_bytes_ <= 0) return;
    if (!cast_first_) {
      memory(name, params * (elem + 2 * main_grad_bytes_));
      return;
    }
    memory(name + ".cast", params * (elem + main_grad_bytes_));  // .to(): read 16-bit, write fp32
    memory(name, params * 3 * main_grad_bytes_);  // add_: read both fp32 tensors, write one
  }
  std::vector<Kernel> take() { return std::move(out_); }
  bool fp8() const { return gemm_dtype_ != dtype_; }
  std::vector<Kernel>& out() { return out_; }

 private:
  void push(std::string_view name, Kernel k) {
    k.name = names_.name(name);
    k.dtype = dtype_;
    out_.push_back(k);
  }
  engine::KernelTable& names_;
  std::uint8_t gemm_dtype_;     // the GEMMs'
  std::uint8_t dtype_;          // everything else's
  double main_grad_bytes_ = 0;  // > 0: weight gradients accumulate in a kernel of their own
  bool cast_first_ = false;     // ... after a cast kernel of their own
  std::vector<Kernel> out_;
};

}  // namespace clustersim::models::kernels::detail
