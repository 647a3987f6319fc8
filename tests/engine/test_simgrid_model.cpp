// The simgrid network model against closed forms derived here and against the flow model.
// SimGrid's engine runs once per process (docs/simgrid.md), so every simgrid run
// below happens in a forked child that sends its completion times back through a pipe.
#include <gtest/gtest.h>

#ifdef CLUSTERSIM_HAVE_SIMGRID

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <functional>
#include <map>
#include <numeric>
#include <stdexcept>
#include <string>
#include <vector>

#include "engine/calibration/collective_profile.hpp"
#include "engine/network/collectives.hpp"
#include "engine/network/network_model.hpp"

namespace clustersim::engine {
namespace {

constexpr double kB = 10e9;      // bytes/s per direction
constexpr double kAlpha = 2e-6;  // route latency GPU -> switch -> GPU: two 1 µs links
constexpr double kTolerance = 0.03;

Topology single_switch(int n) {
  Topology t;
  const VertexId sw = t.add_vertex(VertexKind::leaf_switch, "sw", -1);
  for (int i = 0; i < n; ++i) {
    const EndpointId g = t.add_gpu("gpu" + std::to_string(i), i);
    t.add_link(t.gpu_vertex(g), sw, Bandwidth::bytes_per_second(kB), Time::from_ps(1'000'000),
               LinkKind::ib);
  }
  return t;
}

std::vector<EndpointId> first_gpus(int n) {
  std::vector<EndpointId> m(static_cast<std::size_t>(n));
  std::iota(m.begin(), m.end(), EndpointId{0});
  return m;
}

// One transfer to start: its plan, payload and start time.
struct Job {
  TransferPlan plan;
  double bytes = 0.0;
  Time at = Time::zero();
};

// Runs the jobs on `kind` (transfer i is jobs[i]) and returns each one's completion time in
// seconds, in job order.
std::vector<double> run_jobs(const std::string& kind, const Topology& t,
                             const std::vector<Job>& jobs, const NetworkOptions& options = {}) {
  auto model = make_network_model(kind, t, nullptr, options);
  std::map<TransferId, Time> done;
  std::vector<TransferId> completed;
  std::size_t next = 0;
  while (done.size() < jobs.size()) {
    const Time tn = model->next_event_time();
    if (next < jobs.size() && jobs[next].at <= tn) {
      model->start(static_cast<TransferId>(next), jobs[next].plan, jobs[next].bytes, jobs[next].at);
      ++next;
      continue;
    }
    if (tn == Time::max()) throw std::runtime_error("the model stopped with transfers pending");
    completed.clear();
    model->advance(tn, completed);
    for (TransferId id : completed)
      done[id] = tn;
  }
  std::vector<double> seconds;
  for (const auto& [id, t_done] : done)
    seconds.push_back(t_done.seconds());
  return seconds;
}

// `body` in a child process; its numbers come back through a pipe, its exception as a failure.
std::vector<double> in_child(const std::function<std::vector<double>()>& body) {
  int fds[2];
  if (pipe(fds) != 0) throw std::runtime_error("pipe failed");
  const pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    std::string out;
    try {
      for (double v : body()) {
        char buf[64];
        std::snprintf(buf, sizeof buf, "%.17g ", v);
        out += buf;
      }
    } catch (const std::exception& e) {
      out = std::string("error: ") + e.what();
    }
    const ssize_t ignored = ::write(fds[1], out.data(), out.size());
    (void)ignored;
    close(fds[1]);
    _exit(0);
  }
  close(fds[1]);
  std::string text;
  char buf[4096];
  ssize_t n = 0;
  while ((n = ::read(fds[0], buf, sizeof buf)) > 0)
    text.append(buf, static_cast<std::size_t>(n));
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
    throw std::runtime_error("the simgrid child process died");
  if (text.starts_with("error: ")) throw std::runtime_error(text);
  std::vector<double> values;
  std::size_t pos = 0;
  while (pos < text.size()) {
    std::size_t used = 0;
    values.push_back(std::stod(text.substr(pos), &used));
    pos += used;
    while (pos < text.size() && text[pos] == ' ')
      ++pos;
  }
  return values;
}

std::vector<double> simgrid_jobs(const Topology& t, const std::vector<Job>& jobs,
                                 const NetworkOptions& options = {}) {
  return in_child([&] { return run_jobs("simgrid", t, jobs, options); });
}

// NCCL's ring latency with one GPU per node, Simple: 8.4 µs + steps × 14 µs (the hop latency
// is above the 2 µs route), as in test_network_models.cpp.
double ring_latency(int steps) {
  return 8.4e-6 + steps * 14e-6;
}

TEST(SimgridModel, IsInTheRegistry) {
  const auto names = network_model_names();
  EXPECT_NE(std::find(names.begin(), names.end(), "simgrid"), names.end());
}

TEST(SimgridModel, NcclRingAllReduceMatchesClosedFormAndFlow) {
  // L + 2(n−1)/n · S/B: SimGrid carries the 2(n−1) steps of S/n, each paying α; the rest of NCCL's
  // latency L is paid up front.
  for (int n : {4, 8}) {
    const Topology t = single_switch(n);
    for (double s : {4e6, 256e6}) {
      const Job job{
          plan_collective(CollectiveType::all_reduce, Algorithm::ring, first_gpus(n), 0, t), s};
      const double want = ring_latency(2 * (n - 1)) + 2.0 * (n - 1) * s / (n * kB);
      const double got = simgrid_jobs(t, {job}).at(0);
      const double flow = run_jobs("flow", t, {job}).at(0);
      EXPECT_NEAR(got, want, kTolerance * want) << "n=" << n << " S=" << s;
      EXPECT_NEAR(got, flow, kTolerance * flow) << "n=" << n << " S=" << s;
    }
  }
}

// NCCL's protocols cap a tree all-reduce below the links (Phase::rate_cap: the LL protocol's
// 8-byte lines carry 4 bytes of data, the tree's per-channel limit): flow caps each flow, and
// simgrid paces a capped flow's messages to the same rate. Without the pacing, simgrid ran the
// flows at the links' max-min share: the LL tree came out in 0.53 of flow's time on 2 and 4
// GPUs, Simple's in 0.92. Measured with pacing: within 0.1 %.
TEST(SimgridModel, TreeAllReduceKeepsTheProtocolCapAsFlowDoes) {
  // With 8 GPUs the LL128 tree's flows that carry both trees' bytes and their neighbours' caps
  // sum to exactly a link's bandwidth: only a per-message bound inside SimGrid's solver (not an
  // equal share paced afterwards) gives each its cap, as flow's capped max-min does.
  for (int n : {2, 4, 8}) {
    const Topology t = single_switch(n);
    for (Protocol p : {Protocol::ll, Protocol::ll128, Protocol::simple}) {
      const Job job{
          plan_collective(CollectiveType::all_reduce, Algorithm::tree, first_gpus(n), 0, t, p),
          64e6};
      ASSERT_GT(job.plan.phases.front().rate_cap, 0.0) << "the tree plan has no cap to test";
      const double flow = run_jobs("flow", t, {job}).at(0);
      const double got = simgrid_jobs(t, {job}).at(0);
      EXPECT_NEAR(got, flow, 0.001 * flow) << "n=" << n << " protocol " << static_cast<int>(p);
    }
  }
}

TEST(SimgridModel, BareRingAllReducePaysTheRouteLatencyEveryStep) {
  // A ring plan without NCCL's latency: 2(n−1) messages of S/n on every edge, each α + S/(n·B):
  // 2(n−1)·α + 2(n−1)/n · S/B. With S = 1 MB on 8 GPUs the latency is 14 % of it.
  const int n = 8;
  const double s = 1e6;
  const Topology t = single_switch(n);
  Phase phase;
  phase.steps = 2 * (n - 1);
  for (int i = 0; i < n; ++i)
    phase.flows.push_back(
        {static_cast<EndpointId>(i), static_cast<EndpointId>((i + 1) % n), 2.0 * (n - 1) / n});
  TransferPlan plan;
  plan.phases = {phase};
  plan.collective = CollectiveType::all_reduce;
  plan.algorithm = Algorithm::ring;
  plan.ranks = n;
  const double want = 2.0 * (n - 1) * kAlpha + 2.0 * (n - 1) * s / (n * kB);
  EXPECT_NEAR(simgrid_jobs(t, {{plan, s}}).at(0), want, kTolerance * want);
}

TEST(SimgridModel, RingAllGatherAndDirectAllToAllMatchClosedForms) {
  const int n = 8;
  const Topology t = single_switch(n);
  // All-gather: L(n−1 steps) + (n−1)/n · S/B.
  const double s = 64e6;
  const Job gather{
      plan_collective(CollectiveType::all_gather, Algorithm::ring, first_gpus(n), 0, t), s};
  const double want_gather = ring_latency(n - 1) + (n - 1) * s / (n * kB);
  // Direct all-to-all: every GPU's uplink sends (n−1) chunks of S/n at once: (n−1)·α + (n−1)/n·S/B.
  const Job a2a{plan_collective(CollectiveType::all_to_all, Algorithm::direct, first_gpus(n), 0, t),
                s};
  const double want_a2a = (n - 1) * kAlpha + (n - 1) * s / (n * kB);
  EXPECT_NEAR(simgrid_jobs(t, {gather}).at(0), want_gather, kTolerance * want_gather);
  EXPECT_NEAR(simgrid_jobs(t, {a2a}).at(0), want_a2a, kTolerance * want_a2a);
  EXPECT_NEAR(run_jobs("flow", t, {a2a}).at(0), want_a2a, kTolerance * want_a2a);
}

TEST(SimgridModel, PipelinedChainBroadcastMatchesClosedForm) {
  // The ring broadcast is a chain root -> 1 -> ... -> n−1 of S on each edge: (n−1)·α + S/B once the
  // pipeline is full. SimGrid forwards 512 KiB chunks (489 of them for 256 MB), so the fill adds
  // (n−2)/489 ≈ 1.2 % of S/B.
  const int n = 8;
  const double s = 256e6;
  const Topology t = single_switch(n);
  const Job job{plan_collective(CollectiveType::broadcast, Algorithm::ring, first_gpus(n), 0, t),
                s};
  const double want = (n - 1) * kAlpha + s / kB;
  EXPECT_NEAR(simgrid_jobs(t, {job}).at(0), want, kTolerance * want);
  EXPECT_NEAR(run_jobs("flow", t, {job}).at(0), want, kTolerance * want);
}

// Two leaves of four GPUs under one spine; each leaf's uplink carries `uplink` bytes/s each way
// (kB: 4:1 oversubscribed). GPUs 2, 3, 6 and 7 hang on cables of `far_latency` seconds.
Topology two_leaves(double uplink, double far_latency) {
  Topology t;
  const VertexId spine = t.add_vertex(VertexKind::spine_switch, "spine", -1);
  for (int leaf = 0; leaf < 2; ++leaf) {
    const VertexId l = t.add_vertex(VertexKind::leaf_switch, "leaf" + std::to_string(leaf), -1);
    t.add_link(l, spine, Bandwidth::bytes_per_second(uplink), Time::from_ps(1'000'000),
               LinkKind::ib);
    for (int i = 0; i < 4; ++i) {
      const int node = leaf * 4 + i;
      const EndpointId g = t.add_gpu("gpu" + std::to_string(node), node);
      t.add_link(t.gpu_vertex(g), l, Bandwidth::bytes_per_second(kB),
                 i >= 2 ? Time::from_seconds(far_latency) : Time::from_ps(1'000'000), LinkKind::ib);
    }
  }
  return t;
}

// Two 4-GPU ring all-reduces, {0,1,4,5} and {2,3,6,7}: each crosses leaf0's and leaf1's uplink
// once per direction (1 -> 4, 5 -> 0 and 3 -> 6, 7 -> 2).
std::vector<Job> two_rings(const Topology& t, double s, bool both) {
  std::vector<Job> jobs;
  for (const std::vector<EndpointId>& m :
       {std::vector<EndpointId>{0, 1, 4, 5}, std::vector<EndpointId>{2, 3, 6, 7}}) {
    jobs.push_back({plan_collective(CollectiveType::all_reduce, Algorithm::ring, m, 0, t), s});
    if (!both) break;
  }
  return jobs;
}

TEST(SimgridModel, TwoAllReducesOnAnOversubscribedUplinkBothSlowDown) {
  // Alone, a ring's edges all run at B: L + 2(n−1)/n · S/B with n = 4. Together, the two rings'
  // crossing edges share each uplink (B each way) at B/2: L + 2(n−1)/n · S/(B/2). Both models
  // must land on both closed forms.
  const Topology t = two_leaves(kB, 1e-6);
  const double s = 64e6;
  const auto alone_jobs = two_rings(t, s, false);
  const auto both_jobs = two_rings(t, s, true);
  const double latency = alone_jobs[0].plan.phases[0].latency_for(s).seconds();
  const double alone = latency + 1.5 * s / kB;
  const double together = latency + 1.5 * s / (kB / 2.0);
  for (const std::string kind : {"flow", "simgrid"}) {
    const auto a = kind == "flow" ? run_jobs(kind, t, alone_jobs) : simgrid_jobs(t, alone_jobs);
    const auto b = kind == "flow" ? run_jobs(kind, t, both_jobs) : simgrid_jobs(t, both_jobs);
    EXPECT_NEAR(a.at(0), alone, kTolerance * alone) << kind;
    EXPECT_NEAR(b.at(0), together, kTolerance * together) << kind;
    EXPECT_NEAR(b.at(1), together, kTolerance * together) << kind;
  }
}

TEST(SimgridModel, UnderContentionSimgridFavoursTheShorterRoundTrip) {
  // Ring B's GPUs sit on 20 µs cables. The flow model shares the uplinks max-min fairly: both rings
  // get B/2 while both run and end together near L + 1.5·S/(B/2). SimGrid (CM02 and LV08 alike)
  // weighs a flow's share by its latency, as TCP's throughput falls with the round trip: ring A
  // takes most of each uplink and ends long before, ring B still ends near the fair figure (it
  // has the uplink to itself once A is done).
  const Topology t = two_leaves(kB, 20e-6);
  const auto jobs = two_rings(t, 64e6, true);
  const auto flow = run_jobs("flow", t, jobs);
  const auto sg = simgrid_jobs(t, jobs);
  EXPECT_LT(sg.at(0), 0.8 * flow.at(0));
  EXPECT_NEAR(sg.at(1), flow.at(1), kTolerance * flow.at(1));
}

TEST(SimgridModel, SameInputGivesTheSameTimesToThePicosecond) {
  const Topology t = two_leaves(kB, 1e-6);
  auto jobs = two_rings(t, 48e6, true);
  jobs[1].at = Time::from_seconds(1e-3);  // the second joins while the first runs
  const auto first = simgrid_jobs(t, jobs);
  const auto second = simgrid_jobs(t, jobs);
  ASSERT_EQ(first.size(), 2u);
  EXPECT_EQ(first, second);
}

TEST(SimgridModel, EveryNetworkModelOfSimgridRuns) {
  // CM02 and LV08 share links max-min, weighing flows by their round trip (alike here). IB adds
  // its penalty only where a host sends to (or receives from) several hosts at once: not in the
  // two rings (one flow out, one in per GPU), but in a direct all-to-all, which it slows down.
  const Topology t = two_leaves(kB, 1e-6);
  const auto rings = two_rings(t, 64e6, true);
  const Topology sw = single_switch(4);
  const Job a2a{
      plan_collective(CollectiveType::all_to_all, Algorithm::direct, first_gpus(4), 0, sw), 64e6};
  std::map<std::string, std::pair<double, double>> ends;
  for (std::string_view model : kSimgridModels) {
    NetworkOptions options;
    options.simgrid.model = std::string(model);
    ends[options.simgrid.model] = {simgrid_jobs(t, rings, options).at(0),
                                   simgrid_jobs(sw, {a2a}, options).at(0)};
  }
  EXPECT_NEAR(ends["LV08"].first, ends["CM02"].first, 1e-3 * ends["CM02"].first);
  EXPECT_NEAR(ends["IB"].first, ends["CM02"].first, 1e-3 * ends["CM02"].first);
  EXPECT_GT(ends["IB"].second, 1.1 * ends["CM02"].second);
}

TEST(SimgridModel, BandwidthFactorAndAProfilesSendRecvScaleTheRate) {
  // One 100 MB message between two GPUs on one switch: α + S/(f·B), f the scenario's bandwidth
  // factor times the profile's point-to-point busbw over the route's B (2.5 of 10 GB/s: 0.25).
  const double s = 100e6;
  const Topology t = single_switch(2);
  const Job job{plan_collective(CollectiveType::send_recv, Algorithm::ring, first_gpus(2), 0, t),
                s};
  NetworkOptions half;
  half.simgrid.bandwidth_factor = 0.5;
  const double want_half = kAlpha + s / (0.5 * kB);
  EXPECT_NEAR(simgrid_jobs(t, {job}, half).at(0), want_half, kTolerance * want_half);
  CollectiveFit fit;
  fit.type = CollectiveType::send_recv;
  fit.shape = GroupShape{2, 2};
  fit.ranges = {ProtocolRange{1.0, 1e12, 5e-6, 2.5e9, 0.0}};
  const CollectiveProfile profile({fit});
  const double want_profile = kAlpha + s / (0.25 * kB);
  const auto got = in_child([&] {
    auto model = make_network_model("simgrid", t, &profile);
    model->start(0, job.plan, s, Time::zero());
    std::vector<TransferId> done;
    Time at = Time::zero();
    while (done.empty()) {
      at = model->next_event_time();
      model->advance(at, done);
    }
    return std::vector<double>{at.seconds()};
  });
  EXPECT_NEAR(got.at(0), want_profile, kTolerance * want_profile);
}

// A trace's link counters (Timeline::link_rates): one 64 MB message over the one link between two
// GPUs runs at the link's B from the end of its latency to its arrival (utilization 1), the
// counter falls to 0 when it arrives, and the rates integrate to the S bytes carried.
TEST(SimgridModel, LinkRatesShowAnUncontendedTransferAtFullUtilizationThenZero) {
  const double s = 64e6;
  Topology t;
  const EndpointId a = t.add_gpu("gpu0", 0);
  const EndpointId b = t.add_gpu("gpu1", 0);
  t.add_link(t.gpu_vertex(a), t.gpu_vertex(b), Bandwidth::bytes_per_second(kB),
             Time::from_ps(1'000'000), LinkKind::nvlink);
  ASSERT_EQ(t.route(a, b).size(), 1u);
  const LinkId forward = t.route(a, b)[0];
  const Job job{plan_collective(CollectiveType::send_recv, Algorithm::ring, first_gpus(2), 0, t),
                s};
  // Back from the child: the completion time, then (link, time, bytes/s) per sample.
  const auto out = in_child([&] {
    auto model = make_network_model("simgrid", t);
    std::vector<double> samples;
    model->set_link_rate_sink([&](LinkId l, Time at, double rate) {
      samples.insert(samples.end(), {static_cast<double>(l), at.seconds(), rate});
    });
    model->start(0, job.plan, s, Time::zero());
    std::vector<TransferId> done;
    Time at = Time::zero();
    while (done.empty()) {
      at = model->next_event_time();
      model->advance(at, done);
    }
    model->next_event_time();  // the simulator asks again after every advance: the last samples
    samples.insert(samples.begin(), at.seconds());
    return samples;
  });
  ASSERT_GE(out.size(), 7u) << "expected at least a rise and a fall";
  const double end = out[0];
  double peak = 0.0, carried = 0.0, last_time = 0.0, last_rate = 0.0, busy_from = -1.0;
  for (std::size_t i = 1; i + 2 < out.size(); i += 3) {
    ASSERT_EQ(static_cast<LinkId>(out[i]), forward) << "only the sending direction carries data";
    const double at = out[i + 1], rate = out[i + 2];
    ASSERT_GE(at, last_time);
    carried += last_rate * (at - last_time);
    if (rate > 0.0 && busy_from < 0.0) busy_from = at;
    peak = std::max(peak, rate);
    last_time = at;
    last_rate = rate;
  }
  EXPECT_NEAR(peak / kB, 1.0, kTolerance);
  EXPECT_EQ(last_rate, 0.0) << "the counter falls to 0 when the message has arrived";
  EXPECT_NEAR(last_time, end, 1e-9);
  EXPECT_NEAR(carried, s, kTolerance * s);
  // Busy at B from the end of the first chunk's latency (α = 1 µs) to the end: S/B.
  EXPECT_NEAR(end - busy_from, s / kB, kTolerance * s / kB);
}

TEST(SimgridModel, UnknownSimgridModelIsRefused) {
  const Topology t = single_switch(2);
  NetworkOptions options;
  options.simgrid.model = "NS3";
  const auto refused = in_child([&]() -> std::vector<double> {
    try {
      make_network_model("simgrid", t, nullptr, options);
    } catch (const std::invalid_argument&) {
      return {1.0};
    }
    return {0.0};
  });
  EXPECT_EQ(refused, std::vector<double>{1.0});
}

TEST(SimgridModel, ASecondSimulationInOneProcessIsRefusedClearly) {
  const Topology t = single_switch(2);
  const auto outcome = in_child([&]() -> std::vector<double> {
    auto first = make_network_model("simgrid", t);
    try {
      auto second = make_network_model("simgrid", t);
    } catch (const std::runtime_error& e) {
      return {std::string(e.what()).find("once per process") != std::string::npos ? 1.0 : 0.0};
    }
    return {};
  });
  ASSERT_EQ(outcome.size(), 1u) << "the second model was accepted";
  EXPECT_EQ(outcome[0], 1.0);
}

}  // namespace
}  // namespace clustersim::engine

#endif  // CLUSTERSIM_HAVE_SIMGRID
