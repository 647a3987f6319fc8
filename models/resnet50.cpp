// ResNet-50 (He et al. 2015, torchvision's v1.5: stride on the 3×3 conv) as a generic layer list,
// derived from the architecture at 224×224 rather than typed in: conv1, the 16 bottleneck blocks,
// fc. Parameters count conv weights (no bias), BatchNorm weight+bias and the fc; FLOPs are 2 × the
// MACs of convs and the fc (BatchNorm, ReLU, pooling and adds are elementwise and left out, as in
// the published 4.09 GMAC figure).
#include <string>
#include <vector>

#include "models/model_spec.hpp"

namespace clustersim::models::detail {
namespace {

constexpr double kBytes = 2.0;  // 16-bit activations, as for the transformer presets

struct Conv {
  double params;
  double macs;
  double out_elems;  // output activation elements
  long out_hw;       // output height = width
};

// k×k convolution, "same" padding, so the output side is ceil(in / stride).
Conv conv(long cin, long cout, long k, long stride, long in_hw) {
  const long out_hw = (in_hw + stride - 1) / stride;
  const double weights = static_cast<double>(k * k * cin * cout);
  const double pixels = static_cast<double>(out_hw * out_hw);
  return {weights, weights * pixels, static_cast<double>(cout) * pixels, out_hw};
}

double batchnorm_params(long channels) {
  return 2.0 * static_cast<double>(channels);
}

}  // namespace

// Stored activations: each conv+BN(+ReLU) keeps the BN input and the ReLU output (the next conv's
// saved input), two tensors of the conv's output size; a downsample's conv+BN keeps one (its input
// is the block input, already kept). The last unit's "ReLU output" is the block output after the
// residual add, which the next block's first conv saves.
std::vector<LayerSpec> resnet50_layers() {
  std::vector<LayerSpec> layers;
  long hw = 224;
  // Stem: 7×7/2 conv to 112×112, BN, ReLU, 3×3/2 max pool to 56×56.
  const Conv c1 = conv(3, 64, 7, 2, hw);
  const double pooled = 64.0 * 56 * 56;
  layers.push_back({"conv1", c1.params + batchnorm_params(64), 2 * c1.macs, -1.0,
                    kBytes * (3.0 * 224 * 224 + 2 * c1.out_elems + pooled), 1});
  hw = 56;

  struct Stage {
    long width;
    int blocks;
    long stride;
  };
  constexpr Stage stages[] = {{64, 3, 1}, {128, 4, 2}, {256, 6, 2}, {512, 3, 2}};
  long in_channels = 64;
  for (int s = 0; s < 4; ++s) {
    const Stage st = stages[s];
    for (int b = 0; b < st.blocks; ++b) {
      const long stride = b == 0 ? st.stride : 1;
      const long out_channels = 4 * st.width;
      const Conv a = conv(in_channels, st.width, 1, 1, hw);
      const Conv m = conv(st.width, st.width, 3, stride, a.out_hw);
      const Conv e = conv(st.width, out_channels, 1, 1, m.out_hw);
      double params = a.params + m.params + e.params + batchnorm_params(st.width) * 2 +
                      batchnorm_params(out_channels);
      double macs = a.macs + m.macs + e.macs;
      double elems = 2 * (a.out_elems + m.out_elems + e.out_elems);
      if (b == 0) {  // projection shortcut: 1×1 conv (strided) + BN
        const Conv d = conv(in_channels, out_channels, 1, stride, hw);
        params += d.params + batchnorm_params(out_channels);
        macs += d.macs;
        elems += d.out_elems;
      }
      layers.push_back({"layer" + std::to_string(s + 1) + "." + std::to_string(b), params, 2 * macs,
                        -1.0, kBytes * elems, 1});
      in_channels = out_channels;
      hw = m.out_hw;
    }
  }
  // Global average pool to 2048, fc to 1000 classes; the fc keeps its 2048-element input.
  layers.push_back({"fc", 2048.0 * 1000 + 1000, 2 * 2048.0 * 1000, -1.0, kBytes * 2048, 1});
  // Memory traffic: a conv writes its output, batch norm reads and writes it, ReLU reads and
  // writes it again, and the next conv reads it: about three times the two tensors each unit
  // stores. The roofline needs this, or ResNet looks compute-bound when it is not.
  for (auto& l : layers)
    l.memory_bytes = 3.0 * l.activation_bytes;
  return layers;
}

}  // namespace clustersim::models::detail
