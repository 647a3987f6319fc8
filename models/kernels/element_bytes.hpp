// Internal to models/kernels: element sizes the kernel lists and the saved-tensor lists share.
// The config's 16-bit dtype comes from the precision; these are the fixed-width ones.
#pragma once

namespace clustersim::models::kernels {

inline constexpr double kFp32 = 4.0;      // softmax statistics, fp32 casts and partial sums
inline constexpr double kMaskByte = 1.0;  // dropout masks are bytes
inline constexpr double kIndex = 8.0;     // int64 indices: token ids, max-pool positions

}  // namespace clustersim::models::kernels
