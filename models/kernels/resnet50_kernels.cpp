#include "models/kernels/resnet50_kernels.hpp"

#include <stdexcept>
#include <string>

#include "models/kernels/element_bytes.hpp"
#include "models/kernels/kernel_emitter.hpp"

namespace clustersim::models::kernels {

namespace {
using detail::Emitter;
using engine::Kernel;
}  // namespace

std::vector<LayerKernels> resnet50_kernels(long batch, engine::KernelTable& names, Precision dtype,
                                           bool fused_bn_relu) {
  if (batch <= 0) throw std::invalid_argument("resnet50 kernels: batch must be >= 1");
  const double N = static_cast<double>(batch);
  const double e = bytes_per_element(dtype);
  std::vector<LayerKernels> layers;

  // conv + BN (+ ReLU): forward kernels appended to `f`; returns the unit's backward kernels in
  // backward order (ReLU, BN, wgrad, dgrad). cuDNN's training BN reads its input twice (statistics,
  // normalize) and writes once; its backward reads x and dy twice and writes dx.
  struct Conv {
    double out_hw;
    std::vector<Kernel> backward;
  };
  auto conv_unit = [&](Emitter& f, const std::string& name, double cin, double cout, double r,
                       double stride, double in_hw, bool relu, bool dgrad) {
    Emitter b(names, dtype);
    const double out_hw = std::ceil(in_hw / stride);
    const double m = N * out_hw * out_hw;
    const double k = cin * r * r;
    const double out = m * cout * e;
    const double bn_params = cout * 4 * kFp32;
    f.gemm(name + ".conv.fprop", m, cout, k, 1, false, true, e);
    if (fused_bn_relu && relu) {
      f.memory(name + ".bn_relu", 3 * out + bn_params);
      b.memory(name + ".bn_relu.bwd", 5 * out + bn_params);
    } else {
      f.memory(name + ".bn", 3 * out + bn_params);
      if (relu) f.memory(name + ".relu", 2 * out);
      if (relu) b.memory(name + ".relu.bwd", 3 * out);
      b.memory(name + ".bn.bwd", 5 * out + bn_params);
    }
    b.gemm(name + ".conv.wgrad", cout, k, m, 1, true, false, e);
    // dgrad is the transposed convolution: m = N·H·W input positions, n = C, k = K·R·S, of which
    // a stride-s convolution's kernel skips the structural zeros (k / s²), so dgrad FLOPs equal
    // the forward's as for unstrided convolutions.
    if (dgrad)
      b.gemm(name + ".conv.dgrad", N * in_hw * in_hw, cin, cout * r * r / (stride * stride), 1,
             false, false, e);
    return Conv{out_hw, b.take()};
  };
  auto append = [](std::vector<Kernel>& to, const std::vector<Kernel>& from) {
    to.insert(to.end(), from.begin(), from.end());
  };

  {  // stem: conv1 7×7/2 + BN + ReLU, 3×3/2 max pool
    Emitter f(names, dtype), b(names, dtype);
    const Conv c1 = conv_unit(f, "conv1", 3, 64, 7, 2, 224, true, false);
    f.memory("conv1.maxpool", N * (112.0 * 112 + 56 * 56) * 64 * e);
    b.memory("conv1.maxpool.bwd", N * 56 * 56 * 64 * (e + kIndex) + 2 * N * 112 * 112 * 64 * e);
    std::vector<Kernel> bwd = b.take();
    append(bwd, c1.backward);
    layers.push_back({"conv1", f.take(), std::move(bwd)});
  }
  struct Stage {
    double width;
    int blocks;
    double stride;
  };
  constexpr Stage stages[] = {{64, 3, 1}, {128, 4, 2}, {256, 6, 2}, {512, 3, 2}};
  double in_c = 64, hw = 56;
  for (int si = 0; si < 4; ++si) {
    for (int bi = 0; bi < stages[si].blocks; ++bi) {
      const std::string name = "layer" + std::to_string(si + 1) + "." + std::to_string(bi);
      const double stride = bi == 0 ? stages[si].stride : 1;
      const double w = stages[si].width, out_c = 4 * w;
      Emitter f(names, dtype), b(names, dtype);
      const Conv a = conv_unit(f, name + ".conv_a", in_c, w, 1, 1, hw, true, true);
      const Conv m = conv_unit(f, name + ".conv_b", w, w, 3, stride, a.out_hw, true, true);
      const Conv c = conv_unit(f, name + ".conv_c", w, out_c, 1, 1, m.out_hw, false, true);
      Conv down{0, {}};
      if (bi == 0)
        down = conv_unit(f, name + ".downsample", in_c, out_c, 1, stride, hw, false, true);
      const double out = N * c.out_hw * c.out_hw * out_c * e;
      f.memory(name + ".residual_add", 3 * out);
      f.memory(name + ".relu", 2 * out);
      // Backward: the output ReLU, then the branch's units last to first and the projection;
      // the block input receives two gradients (branch, shortcut), added.
      b.memory(name + ".relu.bwd", 3 * out);
      std::vector<Kernel> bwd = b.take();
      append(bwd, c.backward);
      append(bwd, m.backward);
      append(bwd, a.backward);
      append(bwd, down.backward);
      Emitter tail(names, dtype);
      tail.memory(name + ".input_grad_add", 3 * N * hw * hw * in_c * e);
      append(bwd, tail.take());
      layers.push_back({name, f.take(), std::move(bwd)});
      in_c = out_c;
      hw = c.out_hw;
    }
  }
  {  // global average pool, fc, softmax cross-entropy
    Emitter f(names, dtype), b(names, dtype);
    f.memory("fc.avgpool", N * (7.0 * 7 * 2048 + 2048) * e);
    f.gemm("fc.fprop", N, 1000, 2048, 1, false, true, e);
    f.memory("fc.cross_entropy", N * 1000 * (e + 3 * kFp32));
    b.memory("fc.cross_entropy.bwd", N * 1000 * (kFp32 + e));
    b.gemm("fc.dgrad", N, 2048, 1000, 1, false, false, e);
    b.gemm("fc.wgrad", 1000, 2048, N, 1, true, false, e);
    b.memory("fc.bgrad", N * 1000 * e + 1000 * kFp32);
    b.memory("fc.avgpool.bwd", N * (7.0 * 7 * 2048 + 2048) * e);
    layers.push_back({"fc", f.take(), b.take()});
  }
  return layers;
}

}  // namespace clustersim::models::kernels
