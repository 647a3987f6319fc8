// Fakes that keep the simulator's arithmetic exact in tests: every transfer takes its payload at
// 1 GB/s whatever its plan, every op its FLOPs at 1 TFLOP/s (copies their bytes at 1 GB/s), and
// a single NVSwitch joins the GPUs.
#pragma once

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "engine/compute_model.hpp"
#include "engine/network/network_model.hpp"
#include "engine/simulator.hpp"
#include "engine/topology.hpp"

namespace clustersim::engine::fakes {

inline constexpr double kFlopsPerSecond = 1e12;
inline constexpr double kBytesPerSecond = 1e9;

class OneTeraflop : public ComputeModel {
 public:
  Time duration(const Op& op, double flops) const override {
    return Time::from_seconds(op.kind == OpKind::copy
                                  ? static_cast<double>(op.bytes) / kBytesPerSecond
                                  : flops / kFlopsPerSecond);
  }
};

// Every transfer takes payload / 1 GB/s regardless of the plan.
class FixedRateNetwork : public NetworkModel {
 public:
  std::string_view name() const override { return "fixed"; }
  void start(TransferId id, const TransferPlan&, double bytes, Time now) override {
    pending_.emplace(std::make_pair(now + Time::from_seconds(bytes / kBytesPerSecond), id), id);
    ++started;
  }
  Time next_event_time() const override {
    return pending_.empty() ? Time::max() : pending_.begin()->first.first;
  }
  void advance(Time t, std::vector<TransferId>& done) override {
    while (!pending_.empty() && pending_.begin()->first.first == t) {
      done.push_back(pending_.begin()->second);
      pending_.erase(pending_.begin());
    }
  }
  const std::vector<double>& link_bytes() const override { return bytes_; }
  void set_link_rate_sink(LinkRateSink) override {}
  int started = 0;

 private:
  std::map<std::pair<Time, TransferId>, TransferId> pending_;
  std::vector<double> bytes_;
};

inline Topology gpus_on_a_switch(int n) {
  Topology t;
  const VertexId sw = t.add_vertex(VertexKind::nvswitch, "sw", 0);
  for (int i = 0; i < n; ++i) {
    t.add_gpu("gpu" + std::to_string(i), 0);
    t.add_link(t.gpu_vertex(static_cast<EndpointId>(i)), sw, Bandwidth::gigabytes_per_second(100),
               Time::zero(), LinkKind::nvlink);
  }
  return t;
}

inline double sec(Time t) {
  return t.seconds();
}

// A fixed-rate network and `Compute` over `gpus` GPUs on one switch.
template <class Compute>
struct SimulatorFixture : ::testing::Test {
  Timeline run(const Schedule& s, int gpus = 2, const SimulationOptions& options = {}) {
    topology = gpus_on_a_switch(gpus);
    return simulate(s, topology, network, compute, options);
  }
  Topology topology;
  FixedRateNetwork network;
  Compute compute;
};

}  // namespace clustersim::engine::fakes
