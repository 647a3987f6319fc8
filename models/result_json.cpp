#include "models/result_json.hpp"

namespace clustersim::models {

nlohmann::ordered_json result_to_json(const Result& r, bool reproducible) {
  using nlohmann::ordered_json;
  ordered_json links = ordered_json::array();
  for (const auto& l : r.links)
    links.push_back({{"name", l.name},
                     {"kind", l.kind},
                     {"bytes", l.bytes},
                     {"bandwidth_bytes_per_s", l.bandwidth},
                     {"utilization", l.utilization}});
  const auto& m = r.memory;
  ordered_json suggestions = ordered_json::array();
  for (const auto& x : m.suggestions)
    suggestions.push_back({{"change", x.change},
                           {"peak_bytes_per_gpu", x.peak_bytes},
                           {"fits", x.fits},
                           {"verdict", x.verdict}});
  ordered_json combined;  // null unless no single change fits
  if (m.combined)
    combined = {{"changes", m.combined->changes},
                {"peak_bytes_per_gpu", m.combined->peak_bytes},
                {"fits", m.combined->fits},
                {"verdict", m.combined->verdict},
                {"estimated_time_ratio", m.combined->estimated_time_ratio}};
  ordered_json timeline = ordered_json::array();
  for (const auto& p : m.timeline)
    timeline.push_back({p.time_s, p.bytes});
  const auto& b = r.breakdown_s;
  // A figure the workload cannot give (Result::from_traces) is null, never a made-up zero.
  auto known = [&r](const ordered_json& v) { return r.from_traces ? ordered_json() : v; };
  return {
      {"scenario", r.scenario},
      {"world_size", r.world_size},
      {"iteration_time_s", r.iteration_time_s},
      {"tokens_per_s", known(r.tokens_per_s)},
      {"samples_per_s", known(r.samples_per_s)},
      {"tflops_per_gpu", r.tflops_per_gpu},
      {"mfu", known(r.mfu)},
      {"bubble_fraction", r.bubble_fraction},
      {"exposed_comm_s",
       {{"dp", r.exposed_comm_s.dp},
        {"tp", r.exposed_comm_s.tp},
        {"pp", r.exposed_comm_s.pp},
        {"ep", r.exposed_comm_s.ep},
        {"cp", r.exposed_comm_s.cp},
        {"total", r.exposed_comm_s.total}}},
      {"comm_overlap_fraction", r.comm_overlap_fraction},
      {"memory", known({{"peak_bytes_per_gpu", m.total()},
                        {"capacity_bytes", m.capacity},
                        {"fits", m.fits()},
                        {"peak_rank", m.peak_rank},
                        {"breakdown",
                         {{"weights", m.peak.weights},
                          {"gradients", m.peak.gradients},
                          {"optimizer", m.peak.optimizer},
                          {"activations", m.peak.activations},
                          {"buffers", m.peak.buffers}}},
                        {"overheads",
                         {{"cuda_context", m.overheads.cuda_context},
                          {"workspaces", m.overheads.workspaces},
                          {"nccl", m.overheads.nccl},
                          {"fragmentation", m.overheads.fragmentation},
                          {"startup_cache", m.overheads.startup_cache}}},
                        {"startup_peak_bytes", m.startup_total()},
                        {"allocated_bytes", m.allocated()},
                        {"reserved_bytes", m.reserved()},
                        {"phase", m.phase},
                        {"headroom_bytes", m.headroom()},
                        {"verdict", to_string(m.verdict())},
                        {"suggestions", suggestions},
                        {"combined_suggestion", combined},
                        {"host",
                         {{"bytes_per_node", m.host_per_node},
                          {"capacity_bytes", m.host_capacity},
                          {"fits", m.host_fits()}}},
                        {"timeline", {{"rank", m.peak_rank}, {"points", timeline}}}})},
      {"breakdown_s",
       {{"compute", b.compute},
        {"recompute", b.recompute},
        {"dp_comm", b.dp_comm},
        {"tp_comm", b.tp_comm},
        {"pp_comm", b.pp_comm},
        {"ep_comm", b.ep_comm},
        {"cp_comm", b.cp_comm},
        {"idle", b.idle}}},
      {"critical_rank", r.critical_rank},
      {"offload",
       {{"to_host_bytes", r.offload.to_host_bytes},
        {"from_host_bytes", r.offload.from_host_bytes},
        {"to_host_s", r.offload.to_host_s},
        {"host_step_s", r.offload.host_step_s},
        {"from_host_s", r.offload.from_host_s}}},
      {"links", links},
      {"network_model", r.network_model},
      {"workload", r.from_traces ? "chakra" : "model"},
      {"notes", r.notes},
      {"simulator", {{"events", r.events}, {"wall_s", reproducible ? 0.0 : r.wall_s}}},
  };
}

}  // namespace clustersim::models
