// A PyTorch profiler (Kineto) trace of a real training run mapped onto the plan's ops, so that
// `clustersim compare` can set it beside a prediction (docs/execution.md "Kineto traces").
// Kineto writes Chrome trace JSON: GPU kernels are complete events ("ph": "X") of category
// "kernel" with `ts`/`dur` in microseconds and `args.stream`; `distributedInfo.rank` says whose
// trace it is. Mapping, by name, stream and order:
//   - NCCL kernels (names starting "ncclKernel_" or "ncclDevKernel_") by the collective their
//     name carries (AllReduce, AllGather, ReduceScatter, Broadcast, Reduce; SendRecv, Send, Recv
//     for point to point): the n-th such kernel is the rank's n-th op of that type;
//   - every other kernel, in time order, to the rank's compute ops in issue order: an op with a
//     kernel list takes as many kernels as it lists, one without takes one;
// and what is left on either side is reported as not mapped.
#pragma once

#include <cstddef>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "calibrate/compare.hpp"
#include "calibrate/execution.hpp"
#include "engine/schedule.hpp"
#include "engine/timeline.hpp"

namespace clustersim::calibrate {

struct KinetoMapping {
  engine::Rank rank = 0;
  std::vector<std::optional<OpTimes>> ops;    // per OpId, seconds from the first kernel
  std::vector<engine::OpId> unmapped_ops;     // the rank's ops no kernel was found for
  std::vector<std::string> unmapped_kernels;  // kernels no op was found for
  double span_s = 0;                          // first kernel start to last kernel end
};

// Whether `doc` looks like a Kineto trace rather than a clustersim result.
bool is_kineto_trace(const nlohmann::ordered_json& doc);

// Throws CompareError (calibrate/compare.hpp) naming `file` and the key when the trace has no
// kernels or its rank is not one of the schedule's.
KinetoMapping map_kineto_trace(const engine::Schedule& schedule,
                               const nlohmann::ordered_json& trace, const std::string& file);

// The mapped rank's figures beside the prediction: "iteration" is the span of the rank's ops
// (first start to last end, predicted vs the trace's kernels), the category rows sum the
// durations of the mapped ops by op category (they need not add up to the span: ops overlap and
// the rank idles), and the per-op rows are the mapped ops'.
Comparison compare_kineto(const engine::Schedule& schedule, const engine::Timeline& predicted,
                          const std::string& scenario, const KinetoMapping& mapping,
                          std::size_t top = 10);

// The mapped ops as `clustersim execute` writes them ({"ops": [...]}), for merged_trace.
nlohmann::ordered_json kineto_ops_json(const engine::Schedule& schedule,
                                       const engine::Timeline& predicted,
                                       const KinetoMapping& mapping);

}  // namespace clustersim::calibrate
