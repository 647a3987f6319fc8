#include "models/run_scenario.hpp"

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <future>
#include <string>
#include <vector>

#include "engine/calibration/json_fields.hpp"
#include "engine/format.hpp"
#include "engine/network/nccl_tuning.hpp"
#include "engine/network/network_model.hpp"
#include "engine/network/op_transfer.hpp"
#include "engine/simulator.hpp"
#include "models/calibration_checks.hpp"
#include "models/calibration_profile.hpp"
#include "models/chakra/chakra_import.hpp"
#include "models/compute_model.hpp"
#include "models/compute_profile.hpp"
#include "models/plan_warnings.hpp"
#include "models/result_checks.hpp"
#include "models/size_estimate.hpp"

namespace clustersim::models {

engine::Topology build_topology(const Scenario& sc) {
  auto spec = sc.cluster.topology;
  spec.nodes = sc.cluster.nodes;
  spec.channels = sc.simulation.nccl_channels;
  spec.min_ctas = sc.simulation.nccl_min_ctas;
  try {
    engine::Topology topology = engine::build_cluster_topology(spec);
    for (std::size_t k = 0; k < sc.simulation.link_efficiency.size(); ++k)
      topology.derate(static_cast<engine::LinkKind>(k), sc.simulation.link_efficiency[k]);
    return topology;
  } catch (const std::invalid_argument& e) {
    sc.fail("cluster", e.what());
  }
}

namespace {

// The fitted half of simulation.calibration; empty without one. A bad file is bad scenario
// input: the message names the scenario key, the profile file and the profile's key.
struct Calibration {
  engine::CollectiveProfile collectives;
  ComputeProfile compute;
  std::string name;          // the profile's file name, for notes
  std::string gpu;           // the GPU it was measured on (provenance), "cpu" for the MPI backend
  std::string nccl_version;  // the NCCL it was measured with (provenance), else empty
};

// The GPU family a device or preset name belongs to ("NVIDIA H100 80GB HBM3" and
// "H100-SXM5-80GB" are both H100), or "" when none is recognized.
std::string gpu_family(const std::string& name) {
  if (name == "cpu") return "cpu";
  for (const char* family : {"A100", "H100", "H200", "B200", "V100", "L40S", "A10", "L4"})
    if (name.find(family) != std::string::npos) return family;
  return "";
}

// A profile measured on another GPU used to be applied without a word (issue 10).
// A profile measured on another GPU family: a note, or with `strict` bad input.
void check_gpu_match(const Scenario& sc, const Calibration& c, bool strict,
                     std::vector<std::string>& notes) {
  const std::string theirs = gpu_family(c.gpu), ours = gpu_family(sc.cluster.gpu.name);
  if (theirs.empty() || ours.empty() || theirs == ours) return;
  const std::string what = "profile " + c.name + " was measured on " + c.gpu +
                           ", not on the scenario's " + sc.cluster.gpu.name;
  if (strict)
    sc.fail("simulation.calibration",
            what + " (--strict); allowed: a profile measured on " + ours + " GPUs");
  notes.push_back(what + ": its figures may not hold for this GPU");
}

// "2.21" of "2.21.5": NCCL's algorithms, protocols and tuning change between minor versions.
std::string major_minor(const std::string& version) {
  const auto first = version.find('.');
  if (first == std::string::npos) return version;
  return version.substr(0, version.find('.', first + 1));
}

// A profile measured with another NCCL than the one the scenario says the cluster runs: a note,
// or with `strict` bad input. Nothing to compare when either is unknown.
void check_nccl_match(const Scenario& sc, const Calibration& c, bool strict,
                      std::vector<std::string>& notes) {
  const std::string& ours = sc.simulation.nccl_version;
  if (ours.empty() || c.nccl_version.empty() || major_minor(ours) == major_minor(c.nccl_version))
    return;
  const std::string what = "profile " + c.name + " was measured with NCCL " + c.nccl_version +
                           ", not the scenario's " + ours;
  if (strict)
    sc.fail("simulation.nccl.version",
            what + " (--strict); allowed: a profile measured with NCCL " + major_minor(ours));
  notes.push_back(what + " (simulation.nccl.version): its collective figures may not hold");
}

// A network through a plugin that reports a latency, or with several rails a GPU (AWS EFA under
// aws-ofi-nccl): what the model takes from it, and that no published run of it is matched.
void network_plugin_note(const Scenario& sc, std::vector<std::string>& notes) {
  const engine::NodeTopologySpec& node = sc.cluster.topology.node;
  const int rails = engine::rails_per_nic_device(node);
  const double plugin_us = node.nic_plugin_latency.seconds() * 1e6;
  if (sc.cluster.nodes < 2 || (rails < 2 && !(plugin_us > 0.0))) return;
  std::string what = "cluster.network: ";
  if (rails > 1)
    what += std::to_string(rails) + " NICs per GPU taken as one device of their summed bandwidth";
  if (plugin_us > 0.0)
    what += std::string(rails > 1 ? ", and " : "") + "the network plugin's reported " +
            engine::format_number("%g", plugin_us) +
            " us added to every network step of NCCL's latency model (twice for Simple)";
  notes.push_back(what +
                  ", as NCCL over aws-ofi-nccl on AWS EFA; no published EFA collective table is "
                  "matched yet: p5's all_gather and alltoall (2-32 nodes) differ from the model "
                  "by -25 to +44 % (docs/network-validation.md \"AWS EFA\")");
}

Calibration load_calibration(const Scenario& sc) {
  Calibration c;
  const std::string& path = sc.simulation.calibration;
  if (path.empty()) return c;
  try {
    CalibrationProfile profile = read_calibration_profile(path);
    c.collectives = std::move(profile.collectives);
    c.compute = std::move(profile.compute);
    c.gpu = profile.provenance.gpu;
    c.nccl_version = profile.provenance.nccl_version;
  } catch (const engine::ProfileError& e) {
    sc.fail("simulation.calibration", e.what());
  }
  c.name = std::filesystem::path(path).filename().string();
  return c;
}

// "all_reduce on 8 ranks/1 node: fitted α 12.1 us, busbw 231 GB/s from profile p.json", with one
// "α, busbw (sizes)" per size range the run used, and the shape taken when it was not exact.
std::string profile_note(const engine::ProfileUse& u, const std::string& profile) {
  std::string note = std::string(engine::to_string(u.type)) + " on " +
                     std::to_string(u.requested.ranks) + " ranks/" +
                     std::to_string(u.requested.nodes) +
                     (u.requested.nodes == 1 ? " node: " : " nodes: ");
  if (u.fit == nullptr) return note + "not in profile " + profile + "; cost from the topology";
  if (!u.exact)
    note += "nearest shape " + u.fit->shape.str() + " (bus factor " +
            engine::format_number("%.4g", u.bus_factor) + " for " +
            std::to_string(u.requested.ranks) + " ranks), ";
  note += "fitted ";
  for (std::size_t i = 0; i < u.ranges.size(); ++i) {
    const engine::ProtocolRange& r = u.fit->ranges[u.ranges[i]];
    if (i > 0) note += "; ";
    note += "α " + engine::format_number("%.3g", r.alpha_s * 1e6) + " us, busbw " +
            engine::format_number("%.3g", r.busbw / 1e9) + " GB/s";
    if (u.fit->ranges.size() > 1)
      note +=
          " (" + engine::format_bytes(r.min_bytes) + "–" + engine::format_bytes(r.max_bytes) + ")";
  }
  return note + " from profile " + profile;
}

// Which precisions of the schedule's compute ops took the profile's GEMM efficiency, and which
// fell back to the preset because the profile did not measure them.
void compute_notes(const engine::Schedule& schedule, const RooflineComputeModel& compute,
                   const Calibration& c, std::vector<std::string>& notes) {
  std::array<bool, kNumPrecisions> used{};
  for (const engine::Op& op : schedule.ops) {
    if (op.kind == engine::OpKind::compute && schedule.flops(op) > 0.0)
      used.at(op.precision()) = true;
  }
  for (int i = 0; i < kNumPrecisions; ++i) {
    if (!used[static_cast<std::size_t>(i)]) continue;
    const auto p = static_cast<Precision>(i);
    notes.push_back(compute.profiled(p) ? "compute efficiency from profile GEMM sweep (" +
                                              std::string(to_string(p)) + ") of " + c.name
                                        : "compute efficiency from the " + compute.gpu().name +
                                              " preset: profile " + c.name + " has no " +
                                              std::string(to_string(p)) + " GEMM");
  }
}

// Where a ring or tree across nodes runs at NCCL's per-channel network rate
// (nccl::kNetChannelGBps, fitted on 8 × 400 Gb/s NICs) below faster NICs' line rate, the figure
// rests on that rate alone, which no published run on such NICs checks (docs/network.md "A
// channel's network connection"): say so beside the collective. Empty otherwise.
std::string channel_rate_caveat(const engine::ProcessGroup& group, engine::Algorithm algorithm,
                                int channels, const engine::Topology& topology,
                                const engine::NodeTopologySpec& node) {
  constexpr double kFittedNicBytesPerS = 400e9 / 8.0;  // the NICs kNetChannelGBps was fitted on
  const double nic = node.nic_bandwidth.bytes_per_second();
  if (algorithm != engine::Algorithm::ring && algorithm != engine::Algorithm::tree) return {};
  if (!(nic > kFittedNicBytesPerS) || group.ranks.empty()) return {};
  const int first_node = topology.node_of(group.ranks.front());
  const bool spans_nodes = std::any_of(group.ranks.begin(), group.ranks.end(),
                                       [&](auto r) { return topology.node_of(r) != first_node; });
  const double channel_rate = channels * engine::nccl::kNetChannelGBps * 1e9;
  const double nics = node.nics * nic;
  if (!spans_nodes || !(channel_rate < nics)) return {};
  return "; across nodes its " + std::to_string(channels) + " channels carry at most " +
         engine::format_number("%.1f", channel_rate / 1e9) +
         " GB/s (NCCL's per-channel network rate), below the node's " + std::to_string(node.nics) +
         " NICs' " + engine::format_number("%.0f", nics / 1e9) +
         " GB/s: that rate was measured on 400 Gb/s NICs only and is unverified on " +
         engine::format_number("%.0f", nic * 8.0 / 1e9) + " Gb/s ones (docs/network.md)";
}

// What a collective serves, for the notes: its category's axis, except that a data-parallel
// op keeps its group's finer kind (expert_dp, hsdp shard, ...). A group is named by whichever
// plan asked for its ranks first, so an FSDP gather over the ranks of an EP group runs on a
// group named "ep[0]" (tp 1, ep = dp): the category says what the traffic is.
std::string collective_kind(const engine::Op& op, const std::string& group_name) {
  switch (op.category) {
    case engine::Category::tp_comm:
      return "tp";
    case engine::Category::pp_comm:
      return "pp";
    case engine::Category::ep_comm:
      return "ep";
    case engine::Category::cp_comm:
      return "cp";
    default:
      break;
  }
  const std::string kind = group_name.substr(0, group_name.find('['));
  return kind == "tp" || kind == "pp" || kind == "ep" || kind == "cp" ? "dp" : kind;
}

// The largest send, where its p2p channels and not its route set its rate (docs/network.md
// "Sends"): "pp send of 64 MiB inside a node: 16 p2p channels carry at most 329.6 GB/s (20.6 GB/s
// a channel), below the route's 360 GB/s". Empty otherwise.
std::string send_channel_note(const engine::Schedule& s, const engine::Timeline& tl,
                              engine::OpId id, const engine::Topology& topology) {
  const engine::Op send = s.ops[id];
  // The members and plan the simulation ran it with (op_transfer.hpp).
  const engine::TransferCall call = engine::transfer_call(s, send, topology);
  const std::vector<engine::EndpointId>& pair = call.members;
  const engine::TransferPlan plan = engine::plan_of_op(s, tl, id, topology);
  if (plan.phases.empty() || !plan.phases[0].pipeline.send_recv.on) return {};
  const auto& parts = plan.phases[0].pipeline.send_recv;
  const double bytes = static_cast<double>(send.bytes);
  const double channels = parts.channels(bytes);
  const double rate = channels * parts.channel_rate;
  const double route = topology.route_bandwidth(pair[0], pair[1]).bytes_per_second();
  if (!(rate < route)) return {};
  const bool across = topology.node_of(pair[0]) != topology.node_of(pair[1]);
  const std::string kind = collective_kind(send, "");
  return (kind.empty() ? "" : kind + " ") + "send of " + engine::format_bytes(bytes) +
         (across ? " across nodes" : " inside a node") +
         (call.comm.size() > 2
              ? " on a communicator of " + std::to_string(call.comm.size()) + " ranks"
              : "") +
         ": " + engine::format_number("%.0f", channels) +
         (channels == 1.0 ? " p2p channel carries at most " : " p2p channels carry at most ") +
         engine::format_number("%.1f", rate / 1e9) + " GB/s (" +
         engine::format_number("%.1f", parts.channel_rate / 1e9) +
         " GB/s a channel), below the route's " + engine::format_number("%.1f", route / 1e9) +
         " GB/s (docs/network.md \"Sends\")";
}

// How the largest collectives ran: "dp all_reduce of 1.2 GiB on 16 ranks: ring / Simple, 16
// channels", one note per distinct (kind, type, size), largest first, at most `count`; then the
// largest send where its channels bind (send_channel_note).
void collective_notes(const engine::Schedule& s, const engine::Timeline& tl,
                      const engine::Topology& topology, const engine::NodeTopologySpec& node,
                      std::size_t count, std::vector<std::string>& notes) {
  // One pass keeping the `count` largest distinct collectives: most ops fail the size test, so
  // only a few build their description.
  struct Candidate {
    std::uint64_t bytes;
    std::string what;
    engine::OpId id;
  };
  std::vector<Candidate> best;
  engine::OpId largest_send = engine::kNone;
  std::uint64_t send_bytes = 0;
  // Read without groups: a stamped collective's group is looked up only where it passes the
  // size test, not by a search of its run's map for every one (the metrics phase of GPT-3 175B,
  // which this pass set, 0.11 → 0.06 s).
  s.ops.for_each_non_compute<false>([&](engine::OpId id, const engine::Op& unmapped) {
    if (unmapped.kind == engine::OpKind::send && unmapped.bytes > send_bytes) {
      largest_send = id;
      send_bytes = unmapped.bytes;
    }
    if (unmapped.kind != engine::OpKind::collective || unmapped.bytes == 0) return;
    if (best.size() == count && unmapped.bytes <= best.back().bytes) return;
    const engine::Op op = s.ops[id];
    const auto& group = s.groups[op.group_or_peer];
    const std::string what = collective_kind(op, group.name) + " " +
                             std::string(engine::to_string(op.collective)) + " of " +
                             engine::format_bytes(static_cast<double>(op.bytes)) + " on " +
                             std::to_string(group.ranks.size()) + " ranks";
    const auto same =
        std::find_if(best.begin(), best.end(), [&](const Candidate& c) { return c.what == what; });
    if (same != best.end()) {
      if (op.bytes <= same->bytes) return;
      best.erase(same);  // the same description, larger: keep the larger
    }
    best.push_back({op.bytes, what, id});
    std::stable_sort(best.begin(), best.end(),
                     [](const Candidate& a, const Candidate& b) { return a.bytes > b.bytes; });
    if (best.size() > count) best.pop_back();
  });
  for (const Candidate& c : best) {
    if (c.id >= tl.algorithm.size()) continue;
    notes.push_back(c.what + ": " + std::string(engine::to_string(tl.algorithm[c.id])) + " / " +
                    std::string(engine::to_string(tl.protocol[c.id])) + ", " +
                    std::to_string(tl.channels[c.id]) + " channels" +
                    channel_rate_caveat(s.groups[s.ops[c.id].group_or_peer], tl.algorithm[c.id],
                                        tl.channels[c.id], topology, node));
  }
  if (largest_send != engine::kNone) {
    if (std::string note = send_channel_note(s, tl, largest_send, topology); !note.empty())
      notes.push_back(std::move(note));
  }
}

// What the SMs held by overlapping communication cost the critical rank's compute
// (docs/fidelity.md "Compute and communication share the SMs").
void sm_sharing_note(const engine::Timeline& tl, const Result& r, std::vector<std::string>& notes) {
  if (r.critical_rank >= tl.sm_sharing_delay.size()) return;
  const double delay = tl.sm_sharing_delay[r.critical_rank].seconds();
  const double compute = r.breakdown_s.compute + r.breakdown_s.recompute;
  if (!(delay > 0.0) || !(compute > 0.0)) return;
  const double percent = 100.0 * delay / compute;
  notes.push_back(
      "rank " + std::to_string(r.critical_rank) + "'s compute ran " +
      engine::format_seconds(delay) + " longer (" +
      (percent < 0.05 ? std::string("under 0.1") : engine::format_number("%.1f", percent)) +
      " % of its compute time) on the SMs that overlapping NCCL kernels left it, one "
      "per channel (simulation.sm_sharing)");
}

// The schedule of a Chakra workload; a trace that cannot be read is bad scenario input.
chakra::ImportedWorkload import_traces(const Scenario& sc,
                                       const std::function<void(double)>& progress) {
  try {
    return chakra::import_chakra(sc.workload.chakra, sc.workload.comm_groups,
                                 static_cast<std::uint32_t>(sc.world_size()), progress);
  } catch (const chakra::ChakraError& e) {
    sc.fail("workload.chakra", e.what());
  }
}

}  // namespace

RunOutput run_scenario(const Scenario& sc, const RunOptions& options) {
  const auto began = std::chrono::steady_clock::now();
  auto phase = [&](std::string_view name, double fraction) {
    if (options.cancel != nullptr && options.cancel->load(std::memory_order_relaxed))
      throw Cancelled("cancelled while " + std::string(name));
    if (options.progress) options.progress(name, fraction);
  };
  phase("building", kUnknownFraction);
  const std::string kind = options.network.value_or(sc.simulation.network_model);
  const bool traces = sc.workload.from_chakra();
  // A fold the network checks may be refused mid-run, and the run then takes every rank: the
  // budget is the whole run's. A run that records every op's start (a trace, the GUI, Python)
  // keeps every rank's ops, as it did before the check existed.
  const bool checked =
      !traces && !options.every_rank && !options.record_starts && checks_folded_run(sc, kind);
  const bool fold = checked || (!traces && !options.every_rank && folds_data_parallel(sc, kind));
  if (!traces)
    check_memory_budget(sc, options.max_memory, options.max_memory_origin, fold && !checked, kind);
  const Calibration calibration = load_calibration(sc);
  const bool calibrated = !sc.simulation.calibration.empty();
  engine::Topology topology = build_topology(sc);
  std::vector<std::string> calibration_notes;
  if (calibrated) {
    // Before the schedule is built: a profile that cannot be used must not cost a build.
    check_profile_plausible(sc, sc.simulation.calibration, calibration.gpu, calibration.compute,
                            calibration.collectives, topology);
    check_gpu_match(sc, calibration, options.strict, calibration_notes);
    check_nccl_match(sc, calibration, options.strict, calibration_notes);
  }
  RunOutput out{std::move(topology), {}, {}, {}};
  const RooflineComputeModel roofline(sc.cluster.gpu, calibrated ? &calibration.compute : nullptr,
                                      sc.simulation.sm_sharing);
  std::optional<chakra::RecordedComputeModel> recorded;
  std::vector<std::string> workload_notes;
  if (traces) {
    chakra::ImportedWorkload w = import_traces(sc, [&](double f) { phase("building", f); });
    out.built.schedule = std::move(w.schedule);
    recorded.emplace(std::move(w.list_durations));
    workload_notes = std::move(w.notes);
  } else {
    out.built = build_schedule(sc, fold, [&](double f) { phase("building", f); });
  }
  const engine::ComputeModel& compute =
      recorded ? static_cast<const engine::ComputeModel&>(*recorded) : roofline;
  engine::NetworkOptions network_options;
  network_options.simgrid = sc.simulation.simgrid;
  auto new_network = [&] {
    return engine::make_network_model(
        kind, out.topology, calibrated ? &calibration.collectives : nullptr, network_options);
  };
  auto network = new_network();
  phase("matching", 0.0);
  engine::SimulationOptions sim;
  sim.algorithms = sc.simulation.algorithms;
  if (options.progress) {
    sim.matching_progress = [&options](double f) {
      options.progress("matching", f);
      if (f >= 1.0) options.progress("simulating", 0.0);
    };
    sim.progress = [&options](double f) { options.progress("simulating", f); };
  }
  sim.cancel = options.cancel;
  sim.record_link_rates = options.record_link_rates;
  sim.record_starts = options.record_starts;
  sim.carry_replica_images = checked;
  std::string refused_fold;
  try {
    try {
      out.timeline = engine::simulate(out.built.schedule, out.topology, *network, compute, sim);
      out.built.replicas_checked = checked;
    } catch (const engine::FoldNotExact& e) {
      if (!checked) throw;
      // The replicas did not keep step: every rank, from the start.
      refused_fold = e.what();
      phase("building", kUnknownFraction);
      out.built = build_schedule(sc, false, [&](double f) { phase("building", f); });
      network = new_network();
      phase("matching", 0.0);
      sim.carry_replica_images = false;
      out.timeline = engine::simulate(out.built.schedule, out.topology, *network, compute, sim);
    }
  } catch (const engine::ClockOverflow&) {
    throw;
  } catch (const engine::SimulationError& e) {
    // A plan's schedule that cannot run is a bug; traces that cannot are the user's input.
    if (!traces) throw;
    sc.fail("workload.chakra", std::string("the traces cannot run: ") + e.what());
  }
  // The collective notes read every op once more (0.6 GB on GPT-3 175B): on the other core,
  // while the metrics make their own pass; appended where they always were.
  auto collective_notes_of_run = std::async(std::launch::async, [&] {
    std::vector<std::string> notes;
    collective_notes(out.built.schedule, out.timeline, out.topology, sc.cluster.topology.node, 3,
                     notes);
    return notes;
  });
  phase("metrics", 0.0);
  out.result = compute_metrics(sc, out.built, out.timeline, out.topology, 10,
                               [&](double f) { phase("metrics", f); });
  out.result.network_model = kind;
  out.result.notes = traces ? std::move(workload_notes) : plan_warnings(sc);
  if (!refused_fold.empty())
    out.result.notes.push_back(
        "simulation.fold: auto simulated one data-parallel replica for all, carrying every "
        "replica's traffic, and found that they do not keep step, so every rank was simulated (" +
        refused_fold + ")");
  if (out.built.replicas_checked) {
    out.result.notes.push_back(
        "simulated 1 of " + std::to_string(out.built.folded_replicas) +
        " data-parallel replicas (simulation.fold: auto): the links carried every replica's "
        "traffic and each replica's transfers ended when the simulated one's did, so the figures "
        "and link loads are the whole run's; another replica's rank has its replica-0 "
        "counterpart's per-rank figures; simulation.fold: none simulates every rank");
  } else if (out.built.folded_replicas > 1) {
    const auto* entry = engine::find_network_model(kind);
    const bool contention_free = entry != nullptr && entry->contention_free;
    const bool exact = contention_free && replicas_provably_alike(sc);
    out.result.notes.push_back(
        "simulated 1 of " + std::to_string(out.built.folded_replicas) +
        " data-parallel replicas (simulation.fold): the others run the same ops at the same "
        "instants" +
        (exact
             ? std::string(", exactly so under the ") + kind +
                   " network model on NVSwitch nodes and one fabric switch"
             : std::string(", assumed: ") +
                   (contention_free ? "" : "their traffic does not contend with this one's and ") +
                   "their links are replica 0's (on this fabric they may differ by a switch "
                   "hop's latency); simulation.fold: none simulates every rank") +
        "; per-rank figures and the trace show replica 0's ranks; link loads are left out");
  }
  for (std::string& note : collective_notes_of_run.get())
    out.result.notes.push_back(std::move(note));
  network_plugin_note(sc, out.result.notes);
  sm_sharing_note(out.timeline, out.result, out.result.notes);
  if (calibrated) {
    for (const engine::ProfileUse& u : network->profile_uses())
      out.result.notes.push_back(profile_note(u, calibration.name));
    out.result.notes.insert(out.result.notes.end(), calibration_notes.begin(),
                            calibration_notes.end());
    if (!traces) compute_notes(out.built.schedule, roofline, calibration, out.result.notes);
  }
  out.result.wall_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count();
  // Every front end gets a checked result: a figure that cannot be true is a bug report.
  check_result(out.result);
  return out;
}

}  // namespace clustersim::models
