// Replays validation/collectives/*.yaml (see validation_collectives.hpp). The systems are read from
// the files' free-text `system` fields by a few documented rules; a file whose network we cannot
// express (GPUDirect-TCPXO, NIC count or speed not stated) or that its notes flag as a degraded
// cluster is reported as excluded with the reason, never silently dropped.
#include "models/validation_collectives.hpp"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <regex>
#include <stdexcept>

#include "engine/format.hpp"
#include "engine/network/collectives.hpp"
#include "engine/network/network_model.hpp"
#include "engine/topology_builders.hpp"

namespace clustersim::models {

namespace {

using engine::Algorithm;
using engine::CollectiveType;
using engine::Protocol;

bool contains(const std::string& text, const char* what) {
  return text.find(what) != std::string::npos;
}

struct System {
  int nodes = 0;
  int gpus = 8;
  engine::ClusterTopologySpec spec;
  Algorithm algorithm = Algorithm::automatic;
  bool force_protocol = false;
  Protocol protocol = Protocol::simple;
  int gpus_per_process = 1;  // nccl-tests -g (nGpus): GPUs one thread drives
  std::string excluded;      // reason, empty when expressible
};

std::string text(const YAML::Node& n, const char* key) {
  return n[key] && n[key].IsScalar() ? n[key].as<std::string>() : std::string();
}

// A number of the table at `n[key]`, finite and within [lo, hi]; otherwise an error naming the
// line, the key and what is allowed (the table is then one row, not compared).
double checked(const YAML::Node& n, const char* key, const std::string& name, double lo,
               double hi) {
  const YAML::Node v = n[key];
  double x = 0.0;
  if (!YAML::convert<double>::decode(v, x) || !std::isfinite(x) || x < lo || x > hi)
    throw std::runtime_error("line " + std::to_string(v.Mark().line + 1) + ": " + name + ": '" +
                             v.as<std::string>("") + "' (allowed: a number from " +
                             engine::format_number("%g", lo) + " to " +
                             engine::format_number("%g", hi) + ")");
  return x;
}

// GPU generation: NVLink per direction per GPU and NCCL architecture.
bool read_gpu(const std::string& gpu, engine::NodeTopologySpec& node) {
  node.fabric = engine::IntraNodeFabric::nvswitch;
  if (contains(gpu, "A100")) {
    node.nvlink_bandwidth = engine::Bandwidth::gigabytes_per_second(300);
    node.gpu_arch = 80;
  } else if (contains(gpu, "H100") || contains(gpu, "H200")) {
    node.nvlink_bandwidth = engine::Bandwidth::gigabytes_per_second(450);
    node.gpu_arch = 90;
  } else if (contains(gpu, "B200")) {
    node.nvlink_bandwidth = engine::Bandwidth::gigabytes_per_second(900);
    node.gpu_arch = 100;
  } else {
    return false;
  }
  node.nvls = node.gpu_arch >= 90;
  node.pcie_bandwidth = engine::Bandwidth::gigabytes_per_second(node.gpu_arch >= 90 ? 50 : 25);
  return true;
}

System read_system(const YAML::Node& doc) {
  System s;
  const YAML::Node sys = doc["system"];
  const std::string nodes = text(sys, "nodes");
  if (nodes.find('-') != std::string::npos) {
    s.excluded = "a range of node counts (" + nodes + ") with one expected figure";
    return s;
  }
  s.nodes = std::stoi(nodes);
  s.gpus = sys["gpus_per_node"].as<int>();
  s.spec.nodes = s.nodes;
  s.spec.node.gpus = s.gpus;
  s.spec.node.nics = s.gpus;
  if (!read_gpu(text(sys, "gpu"), s.spec.node)) {
    s.excluded = "GPU '" + text(sys, "gpu") + "' has no NVLink figures here";
    return s;
  }
  // NCCL's tuner reads the host CPU's vendor (CollectiveHardware::amd_cpu); files state it in
  // `system.cpu` where the source or the vendor's machine page gives it, Intel otherwise.
  const std::string cpu = text(sys, "cpu");
  s.spec.node.amd_cpu = contains(cpu, "AMD") || contains(cpu, "EPYC");
  if (sys["net_plugin_latency_us"])
    s.spec.node.nic_plugin_latency = engine::Time::from_seconds(
        checked(sys, "net_plugin_latency_us", "system.net_plugin_latency_us", 0.0, 1e6) * 1e-6);
  const std::string notes = text(doc, "notes");
  const std::string network = text(sys, "network");
  const std::string env = text(sys, "env");
  if (contains(notes, "UNDERPERFORMING") || contains(notes, "underperforming"))
    s.excluded = "the file's notes flag the cluster as underperforming (a degraded fabric)";
  if (s.nodes > 1 && s.excluded.empty()) {
    if (contains(network, "TCPXO")) {
      s.excluded = "GPUDirect-TCPXO (TCP offload) is not an RDMA fabric the model describes";
    } else if (contains(network, "EFA")) {
      // Described (rails grouped per GPU, the plugin's reported latency) but not matched: the
      // what-if figures are in docs/network-validation.md "AWS EFA".
      s.excluded =
          "AWS EFA (SRD through aws-ofi-nccl) is described but not modelled: its per-step cost and "
          "rate, and AWS's tuner plugin's choices, which these runs load, are not the model's "
          "(docs/network-validation.md \"AWS EFA\")";
    } else {
      // "8 x 400 Gb/s", "8 x 200 Gb/s", "8 x 400 GbE"; or "3.2 Tbps per VM" (8 NICs assumed).
      std::smatch m;
      if (std::regex_search(network, m, std::regex(R"((\d+) x (\d+) Gb)"))) {
        s.spec.node.nics = std::stoi(m[1]);
        s.spec.node.nic_bandwidth = engine::Bandwidth::gigabits_per_second(std::stod(m[2]));
      } else if (std::regex_search(network, m, std::regex(R"(([\d.]+) Tbps per VM)"))) {
        s.spec.node.nics = s.gpus;
        s.spec.node.nic_bandwidth =
            engine::Bandwidth::gigabits_per_second(std::stod(m[1]) * 1000.0 / s.gpus);
      } else {
        s.excluded = "the NIC count and speed are not stated in the source";
      }
      if (s.excluded.empty() && s.spec.node.nics > s.gpus && s.spec.node.nics % s.gpus != 0)
        s.excluded = std::to_string(s.spec.node.nics) + " NICs a node for " +
                     std::to_string(s.gpus) +
                     " GPUs: neither at most one per GPU nor the same number of rails on each";
    }
    // A non-blocking fabric: NCCL tests run on one switch or a full fat tree. RoCE is RDMA like
    // InfiniBand (same link class and efficiency).
    s.spec.fabric.kind = engine::FabricKind::single_switch;
    s.spec.fabric.link_kind = engine::LinkKind::ib;
  }
  // NCCL_ALGO / NCCL_PROTO force what the tuner would pick (one value each; NCCL's lists of
  // several and its "^" exclusions are not read: the tuner then picks as usual).
  std::smatch m;
  if (std::regex_search(env, m, std::regex(R"(NCCL_ALGO=(\w+))", std::regex::icase))) {
    std::string name = m[1];
    std::transform(name.begin(), name.end(), name.begin(), ::tolower);
    if (name == "nvlstree") name = "nvls";
    if (auto a = engine::kAlgorithmNames.parse(name)) s.algorithm = *a;
  }
  if (std::regex_search(env, m, std::regex(R"(NCCL_PROTO=(\w+))", std::regex::icase))) {
    std::string name = m[1];
    std::transform(name.begin(), name.end(), name.begin(), ::tolower);
    for (const auto& [p, n] : engine::kProtocolNames.entries()) {
      std::string lower(n);
      std::transform(lower.begin(), lower.end(), lower.begin(), ::tolower);
      if (lower == name) {
        s.force_protocol = true;
        s.protocol = p;
      }
    }
  }
  // NCCL runs max(NCCL_MIN_NCHANNELS (legacy NCCL_MIN_NRINGS), NCCL_MIN_CTAS) ring and tree
  // channels (ncclMinNchannels and config.minCTAs in setupChannels, src/graph/connect.cc), and at
  // least NCCL_MIN_CTAS NVLS channels (src/transport/nvls.cc).
  int channels = 0;
  for (const char* key : {"NCCL_MIN_NCHANNELS", "NCCL_MIN_NRINGS"})
    if (std::regex_search(env, m, std::regex(std::string(key) + R"(=(\d+))")))
      channels = std::max(channels, std::stoi(m[1]));
  if (channels > 0) s.spec.channels = channels;
  if (std::regex_search(env, m, std::regex(R"(NCCL_MIN_CTAS=(\d+))")))
    s.spec.min_ctas = std::stoi(m[1]);
  // nccl-tests' -g N (its log header: "nGpus N") has one thread issue the collective on N GPUs
  // in one group each iteration (startColl, src/common.cu), where the simulator's ranks are one
  // process per GPU as in training.
  const std::string flags = text(sys, "nccl_tests_flags");
  if (std::regex_search(flags, m, std::regex(R"((?:^|\s)-g (\d{1,4})\b|nGpus (\d{1,4})\b)")))
    s.gpus_per_process = std::stoi(m[1].matched ? m[1] : m[2]);
  return s;
}

CollectiveType collective_of(const std::string& name) {
  for (const auto& [type, n] : engine::kCollectiveTypeNames.entries())
    if (n == name) return type;
  throw std::runtime_error("unknown collective '" + name + "'");
}

// The scenario defaults of simulation.link_efficiency (models/scenario.hpp).
void derate(engine::Topology& topo) {
  topo.derate(engine::LinkKind::nvlink, 0.8);
  topo.derate(engine::LinkKind::ib, 0.95);
  topo.derate(engine::LinkKind::ethernet, 0.9);
}

// One collective over every GPU, alone on the flow model: its time in seconds.
double simulate(const engine::TransferPlan& plan, double bytes, const engine::Topology& topo) {
  auto model = engine::make_network_model("flow", topo);
  model->start(0, plan, bytes, engine::Time::zero());
  std::vector<engine::TransferId> done;
  engine::Time t = engine::Time::zero();
  while (done.empty()) {
    t = model->next_event_time();
    if (t == engine::Time::max()) break;
    model->advance(t, done);
  }
  return t.seconds();
}

// One table's rows, appended to `out` only once every row is read.
void validate_table(const std::filesystem::path& path, std::vector<CollectiveCaseResult>& out) {
  const YAML::Node doc = YAML::LoadFile(path.string());
  const System sys = read_system(doc);
  CollectiveCaseResult base;
  base.file = path.filename().string();
  base.collective = text(doc, "collective");
  base.nodes = sys.nodes;
  base.gpus_per_node = sys.gpus;
  if (!sys.excluded.empty()) {
    base.excluded = true;
    base.reason = sys.excluded;
    out.push_back(base);
    return;
  }
  const CollectiveType type = collective_of(base.collective);
  std::vector<CollectiveCaseResult> rows;
  engine::Topology topo = engine::build_cluster_topology(sys.spec);
  derate(topo);
  std::vector<engine::EndpointId> members(topo.num_gpus());
  for (std::size_t i = 0; i < members.size(); ++i)
    members[i] = static_cast<engine::EndpointId>(i);
  const double factor = engine::bus_bandwidth_factor(type, members.size());
  for (const YAML::Node& p : doc["points"]) {
    if (!p["bytes"] || p["bytes"].IsNull()) continue;  // a statement without a message size
    CollectiveCaseResult r = base;
    // nccl-tests sizes run from 0 to a few tens of GiB; 1 PiB bounds what a table may hold.
    r.bytes = checked(p, "bytes", "points[].bytes", 1.0, 1125899906842624.0);
    constexpr double kMaxGBps = 1e6;
    if (p["busbw_GBps"])
      r.published_busbw_GBps = checked(p, "busbw_GBps", "points[].busbw_GBps", 0.0, kMaxGBps);
    else if (p["busbw_GBps_min"])
      r.published_busbw_GBps =
          0.5 * (checked(p, "busbw_GBps_min", "points[].busbw_GBps_min", 0.0, kMaxGBps) +
                 checked(p, "busbw_GBps_max", "points[].busbw_GBps_max", 0.0, kMaxGBps));
    if (p["time_us"]) r.published_time_us = checked(p, "time_us", "points[].time_us", 0.0, 1e12);
    if (p["outlier"] && p["outlier"].as<bool>()) {
      r.excluded = true;
      r.reason = "row flagged as an outlier in the file's notes";
    } else if (r.small() && sys.gpus_per_process > 1) {
      // The timed loop issues iterations back to back, so a short collective's time is that of
      // one thread launching it on every GPU in turn when that is the longer.
      r.excluded = true;
      r.reason = "one process drives " + std::to_string(sys.gpus_per_process) +
                 " GPUs (nccl-tests -g): below 1 MiB its time is the host's launches, not the "
                 "collective";
    }
    // sendrecv_perf has every rank send to the next at once; the rest are collectives.
    const bool sends = type == CollectiveType::send_recv;
    engine::CollectiveChoice choice{engine::Algorithm::direct, engine::Protocol::simple, 1, 0.0};
    if (!sends) choice = engine::choose_collective(type, r.bytes, members, topo, sys.algorithm);
    if (sys.force_protocol) choice.protocol = sys.protocol;
    const engine::TransferPlan plan =
        sends ? engine::plan_neighbour_sends(members, topo)
              : engine::plan_collective(type, choice.algorithm, members, 0, topo, choice.protocol);
    const double seconds = simulate(plan, r.bytes, topo);
    r.simulated_time_us = seconds * 1e6;
    r.simulated_busbw_GBps = seconds > 0.0 ? r.bytes / seconds * factor / 1e9 : 0.0;
    r.algorithm = std::string(engine::to_string(choice.algorithm));
    r.protocol = std::string(engine::to_string(choice.protocol));
    r.channels = plan.channels;
    // Sends in parts (sendrecv, all-to-all): the channels one send takes at this size.
    if (!plan.phases.empty() && plan.phases[0].pipeline.send_recv.on) {
      const auto& parts = plan.phases[0].pipeline.send_recv;
      r.channels = static_cast<int>(parts.channels(r.bytes / parts.ranks));
    }
    rows.push_back(r);
  }
  out.insert(out.end(), rows.begin(), rows.end());
}

}  // namespace

double CollectiveCaseResult::error() const {
  if (small() && published_time_us > 0.0) return simulated_time_us / published_time_us - 1.0;
  return published_busbw_GBps > 0.0 ? simulated_busbw_GBps / published_busbw_GBps - 1.0 : 0.0;
}

std::vector<CollectiveCaseResult> run_collective_validation(const std::string& dir) {
  std::vector<std::filesystem::path> files;
  for (const auto& entry : std::filesystem::directory_iterator(dir))
    if (entry.path().extension() == ".yaml") files.push_back(entry.path());
  std::sort(files.begin(), files.end());
  std::vector<CollectiveCaseResult> out;
  for (const auto& path : files) {
    // A table that does not follow the schema is one row, not compared, naming what is wrong;
    // the folder's other tables are still compared.
    try {
      validate_table(path, out);
    } catch (const std::exception& e) {
      CollectiveCaseResult bad;
      bad.file = path.filename().string();
      bad.excluded = true;
      bad.reason = std::string("not read: ") + e.what();
      out.push_back(std::move(bad));
    }
  }
  return out;
}

}  // namespace clustersim::models
