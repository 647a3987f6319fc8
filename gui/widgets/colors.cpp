#include "gui/widgets/colors.hpp"

#include <array>

namespace clustersim::gui {

namespace {

// Okabe & Ito (2008), "Color Universal Design"; black replaced by grey to show on dark themes,
// and Tol's indigo added as a ninth colour for context-parallel communication.
constexpr std::array<QRgb, 9> kOkabeIto{0xff0072b2, 0xffe69f00, 0xffcc79a7, 0xff009e73, 0xff56b4e9,
                                        0xffd55e00, 0xfff0e442, 0xff999999, 0xff332288};

}  // namespace

QColor category_color(engine::Category category) {
  return QColor::fromRgb(kOkabeIto[static_cast<std::size_t>(category) % kOkabeIto.size()]);
}

QColor segment_color(int segment) {
  // Segments read like categories: compute blue, recompute pink, then the communication kinds.
  static constexpr std::array<int, 8> kOrder{0, 2, 4, 5, 6, 3, 8, 7};
  return QColor::fromRgb(kOkabeIto[static_cast<std::size_t>(
      kOrder[static_cast<std::size_t>(segment) % kOrder.size()])]);
}

}  // namespace clustersim::gui
