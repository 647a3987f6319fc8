#include "models/result_checks.hpp"

#include <cmath>
#include <sstream>
#include <string>

namespace clustersim::models {
namespace {

// Slack for rounding: times are sums of picoseconds divided by the iteration count.
constexpr double kRelative = 1e-9;
constexpr double kAbsolute = 1e-12;

[[noreturn]] void broken(const std::string& invariant, double value, double bound) {
  std::ostringstream os;
  os.precision(17);
  os << "internal error: the result breaks the invariant " << invariant << " (value " << value
     << ", bound " << bound
     << "); no figure is printed. This is a bug in clustersim: please report it with the "
        "scenario and the command line";
  throw ResultInvariantError(os.str());
}

void finite_non_negative(const std::string& name, double v) {
  if (!std::isfinite(v)) broken(name + " is finite", v, 0);
  if (v < 0) broken(name + " >= 0", v, 0);
}

void at_most(const std::string& invariant, double v, double bound) {
  if (v > bound * (1 + kRelative) + kAbsolute) broken(invariant, v, bound);
}

}  // namespace

void check_result(const Result& r) {
  const double t = r.iteration_time_s;
  finite_non_negative("iteration_time_s", t);
  for (const auto& [name, v] : {std::pair{"tokens_per_s", r.tokens_per_s},
                                {"samples_per_s", r.samples_per_s},
                                {"tflops_per_gpu", r.tflops_per_gpu},
                                {"mfu", r.mfu},
                                {"bubble_fraction", r.bubble_fraction},
                                {"comm_overlap_fraction", r.comm_overlap_fraction}})
    finite_non_negative(name, v);
  at_most("mfu <= 1", r.mfu, 1.0);
  at_most("bubble_fraction <= 1", r.bubble_fraction, 1.0);
  at_most("comm_overlap_fraction <= 1", r.comm_overlap_fraction, 1.0);

  const TimeBreakdown& b = r.breakdown_s;
  double sum = 0;
  for (const auto& [name, v] : {std::pair{"compute", b.compute},
                                {"recompute", b.recompute},
                                {"dp_comm", b.dp_comm},
                                {"tp_comm", b.tp_comm},
                                {"pp_comm", b.pp_comm},
                                {"ep_comm", b.ep_comm},
                                {"cp_comm", b.cp_comm},
                                {"idle", b.idle}}) {
    finite_non_negative(std::string("breakdown_s.") + name, v);
    at_most(std::string("breakdown_s.") + name + " <= iteration_time_s", v, t);
    sum += v;
  }
  at_most("the breakdown's sum <= iteration_time_s", sum, t);
  for (const auto& [name, v] : {std::pair{"dp", r.exposed_comm_s.dp},
                                {"tp", r.exposed_comm_s.tp},
                                {"pp", r.exposed_comm_s.pp},
                                {"ep", r.exposed_comm_s.ep},
                                {"cp", r.exposed_comm_s.cp},
                                {"total", r.exposed_comm_s.total}}) {
    finite_non_negative(std::string("exposed_comm_s.") + name, v);
    at_most(std::string("exposed_comm_s.") + name + " <= iteration_time_s", v, t);
  }
  for (const LinkUsage& l : r.links) {
    finite_non_negative("links[" + l.name + "].bytes", l.bytes);
    finite_non_negative("links[" + l.name + "].utilization", l.utilization);
    // Only where links are shared: `analytical` has no contention between concurrent transfers
    // and `ideal` moves the bytes in no time, so their utilization may exceed 1 by design.
    if (r.network_model == "flow")
      at_most("links[" + l.name + "].utilization <= 1", l.utilization, 1.0);
  }
  finite_non_negative("memory.peak_bytes_per_gpu", r.memory.total());
  finite_non_negative("simulator.wall_s", r.wall_s);
}

}  // namespace clustersim::models
