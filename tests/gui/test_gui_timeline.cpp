// The timeline's models without a display: folding a rank's streams into one row, the
// communication ops that crossed a topology link, and a trace the CLI wrote read back into the
// store. Every expected figure is worked out by hand from the inputs.
#include <QFile>
#include <QTemporaryDir>
#include <QTest>
#include <cmath>

#include "engine/network/network_model.hpp"
#include "engine/simulator.hpp"
#include "engine/topology_builders.hpp"
#include "gui/models/lane_folding.hpp"
#include "gui/models/link_transfers.hpp"
#include "gui/models/presentation.hpp"
#include "gui/models/timeline_store.hpp"
#include "timeline_fixture.hpp"

using namespace clustersim;
using namespace clustersim::gui;
using clustersim::gui::test::timeline_of;

namespace {

class NoCompute : public engine::ComputeModel {
 public:
  engine::Time duration(const engine::Op&, double) const override { return engine::Time::zero(); }
};

// The link from the vertex named `a` to the one named `b`.
engine::LinkId link_between(const engine::Topology& t, const std::string& a, const std::string& b) {
  for (engine::LinkId l = 0; l < t.num_links(); ++l)
    if (t.vertex(t.link(l).src).name == a && t.vertex(t.link(l).dst).name == b) return l;
  qFatal("no link %s -> %s", a.c_str(), b.c_str());
}

// The DDP run's bucket all-reduces (tests/models/test_ddp.cpp): 26 us + 1.5 × bytes / (0.92 ×
// 1e11 B/s), NCCL's LL128 ring at 0.92 of the Simple ring's rate; 52.087, 39.043, 35.783 us.
constexpr double kBucketUs[3] = {26 + 1.5 * 1.6e6 / 0.92e5, 26 + 1.5 * 0.8e6 / 0.92e5,
                                 26 + 1.5 * 0.6e6 / 0.92e5};

// Whether a time in ps is the hand figure in us: the simulator's times are whole picoseconds,
// each term rounded, so a sum of a dozen is within a few ps of the exact figure.
bool near_us(std::int64_t ps, double us) {
  return std::abs(static_cast<double>(ps) - us * 1e6) <= 5.0;
}

}  // namespace

class GuiTimelineTest : public QObject {
  Q_OBJECT

 private slots:
  // Two ranks, streams compute and comm. Rank 0: compute ops 0 [0, 10), 1 [20, 30), 2 [40, 50);
  // comm ops 3 [5, 25), 4 [45, 60). Rank 1: compute op 5 [0, 100), comm op 6 [10, 20).
  void folding_merges_a_ranks_lanes_into_one_row() {
    engine::ScheduleBuilder b(2);
    const auto compute = b.stream("compute");
    const auto comm = b.stream("comm");
    for (engine::Rank r = 0; r < 2; ++r) {
      const int computes = r == 0 ? 3 : 1;
      for (int i = 0; i < computes; ++i)
        b.compute({.rank = r, .stream = compute, .name = "c"}, 1.0, 0);
      const int comms = r == 0 ? 2 : 1;
      for (int i = 0; i < comms; ++i)
        b.compute({.rank = r, .stream = comm, .name = "m"}, 1.0, 0);
    }
    const auto s = std::move(b).finish();
    const TimelineStore store = TimelineStore::build(
        s, timeline_of({0, 20, 40, 5, 45, 0, 10}, {10, 30, 50, 25, 60, 100, 20}));
    QCOMPARE(store.lane_count(), std::size_t{4});
    QCOMPARE(store.rank_lanes(0).first, std::size_t{0});
    QCOMPARE(store.rank_lanes(0).count, std::size_t{2});
    QCOMPARE(store.rank_lanes(1).first, std::size_t{2});
    QCOMPARE(store.rank_lanes(7).count, std::size_t{0});

    // Rows: 4 lanes unfolded; rank 0 folded: 1 + 2; all folded: 2; all folded but rank 1: 1 + 2.
    LaneFolding folding;
    QCOMPARE(timeline_rows(store, {}, folding).size(), std::size_t{4});
    folding.set_folded(0, true);
    auto rows = timeline_rows(store, {}, folding);
    QCOMPARE(rows.size(), std::size_t{3});
    QCOMPARE(rows[0].first, std::size_t{0});
    QCOMPARE(rows[0].count, std::size_t{2});
    QCOMPARE(rows[2].first, std::size_t{3});
    folding.fold_all(true);
    QCOMPARE(timeline_rows(store, {}, folding).size(), std::size_t{2});
    folding.toggle(1);
    QVERIFY(!folding.folded(1));
    QVERIFY(folding.folded(0));
    QCOMPARE(timeline_rows(store, {}, folding).size(), std::size_t{3});
    // The rank filter keeps rank 1 alone: its two lanes.
    QCOMPARE(timeline_rows(store, {1}, folding).size(), std::size_t{2});
    folding.fold_all(false);
    QCOMPARE(timeline_rows(store, {}, folding).size(), std::size_t{4});

    // Rank 0 folded, [8, 21): ops overlapping it are 0 [0, 10), 3 [5, 25), 1 [20, 30), merged by
    // start; [26, 44) holds 1 (to 30) and 2 (from 40).
    const LaneRange rank0 = store.rank_lanes(0);
    auto ops_of = [](const std::vector<LaneItem>& items) {
      std::vector<engine::OpId> ops;
      for (const LaneItem& item : items)
        ops.push_back(item.op);
      return ops;
    };
    QCOMPARE(ops_of(store.visible_items(rank0, 8, 21)), (std::vector<engine::OpId>{0, 3, 1}));
    QCOMPARE(ops_of(store.visible_items(rank0, 26, 44)), (std::vector<engine::OpId>{1, 2}));
    QCOMPARE(ops_of(store.visible_items(rank0, 60, 99)), std::vector<engine::OpId>{});
    // 100 ps a pixel: rank 0's five ops all lie in column 0, one span of 5 shown as the longest
    // (op 3, 20 ps) reaching 60 ps.
    const auto spans = store.spans(rank0, TimeAxis(0.0, 100e-12), 10);
    QCOMPARE(spans.size(), std::size_t{1});
    QCOMPARE(spans[0].count, 5u);
    QCOMPARE(spans[0].op, engine::OpId{3});
    QCOMPARE(spans[0].end_ps, std::int64_t{60});
    // At 1 ps a pixel each op is its own span: 5.
    QCOMPARE(store.spans(rank0, TimeAxis(0.0, 1e-12), 100).size(), std::size_t{5});
    // Under 22 ps both op 3 [5, 25) and op 1 [20, 30) lie; op 1 started later and is drawn on
    // top. 32 ps is in a gap: 2 ps after op 1, 8 ps before op 2.
    QCOMPARE(store.op_at(rank0, 22, 0), std::optional<engine::OpId>(1));
    QCOMPARE(store.op_at(rank0, 32, 3), std::optional<engine::OpId>(1));
    QVERIFY(!store.op_at(rank0, 35, 3));
  }

  // Two nodes of two GPUs on one NVSwitch each, one NIC per GPU (GPU j reaches the fabric only
  // through NIC j), joined by one switch. Ranks 0, 1 on node 0 and 2, 3 on node 1. Each rank
  // all-reduces over its tensor-parallel pair (tp0 = {0, 1}, tp1 = {2, 3}: inside a node, over
  // NVLink) and then over its data-parallel pair (dp0 = {0, 2}, dp1 = {1, 3}: across the nodes);
  // rank 0 sends to rank 2 and rank 1 to rank 3. The cable n0.nic0 ↔ switch carries exactly
  // rank 0's traffic to node 1: dp0's all-reduce on ranks 0 and 2 and the 0 → 2 send/recv.
  void transfers_over_a_link_are_the_ops_whose_flows_crossed_it() {
    engine::ClusterTopologySpec spec;
    spec.nodes = 2;
    spec.node.gpus = 2;
    spec.node.nics = 2;
    spec.fabric.kind = engine::FabricKind::single_switch;
    const engine::Topology topology = engine::build_cluster_topology(spec);

    engine::ScheduleBuilder b(4);
    const auto comm = b.stream("comm");
    const engine::GroupId tp[] = {b.add_group({0, 1}, "tp0"), b.add_group({2, 3}, "tp1")};
    const engine::GroupId dp[] = {b.add_group({0, 2}, "dp0"), b.add_group({1, 3}, "dp1")};
    std::vector<engine::OpId> dp_ops(4), tp_ops(4);
    for (engine::Rank r = 0; r < 4; ++r) {
      const engine::ScheduleBuilder::Common c{
          .rank = r, .stream = comm, .category = engine::Category::tp_comm, .name = "tp"};
      tp_ops[r] = b.collective(c, engine::CollectiveType::all_reduce, tp[r / 2], 1 << 20);
      engine::ScheduleBuilder::Common d = c;
      d.category = engine::Category::dp_comm;
      d.name = "dp";
      dp_ops[r] = b.collective(d, engine::CollectiveType::all_reduce, dp[r % 2], 1 << 20);
    }
    const engine::ScheduleBuilder::Common pp{.rank = 0, .stream = comm, .name = "pp"};
    const engine::OpId send0 = b.send(pp, 2, 4096, 0);
    const engine::OpId send1 = b.send({.rank = 1, .stream = comm, .name = "pp"}, 3, 4096, 0);
    const engine::OpId recv2 = b.recv({.rank = 2, .stream = comm, .name = "pp"}, 0, 4096, 0);
    const engine::OpId recv3 = b.recv({.rank = 3, .stream = comm, .name = "pp"}, 1, 4096, 0);
    const auto schedule = std::move(b).finish();
    auto network = engine::make_network_model("flow", topology);
    const engine::Timeline timeline = engine::simulate(schedule, topology, *network, NoCompute{});

    const std::vector<engine::LinkId> nic0 = {link_between(topology, "n0.nic0", "switch"),
                                              link_between(topology, "switch", "n0.nic0")};
    QCOMPARE(transfers_over(schedule, timeline, topology, nic0),
             (OpList{dp_ops[0], dp_ops[2], send0, recv2}));
    // n1.nic1 ↔ switch: rank 3's side of dp1 and of the 1 → 3 send/recv.
    const std::vector<engine::LinkId> n1_nic1 = {link_between(topology, "switch", "n1.nic1")};
    QCOMPARE(transfers_over(schedule, timeline, topology, n1_nic1),
             (OpList{dp_ops[1], dp_ops[3], send1, recv3}));
    // GPU 2's NVLink to its node's switch: tp1 (ranks 2 and 3) only.
    const std::vector<engine::LinkId> nvlink = {link_between(topology, "n1.gpu0", "n1.nvswitch")};
    QCOMPARE(transfers_over(schedule, timeline, topology, nvlink), (OpList{tp_ops[2], tp_ops[3]}));
    // A set cancel flag stops the scan with nothing found.
    const std::atomic<bool> cancel{true};
    QVERIFY(transfers_over(schedule, timeline, topology, nic0, &cancel).empty());
  }

  // The DDP run worked out by hand in tests/models/test_ddp.cpp, every rank simulated, written by
  // the CLI's trace writer and read back into the store. Per rank, on stream compute: forward
  // L0..L3 over [0, 80) us, backward L3, L2, L1, L0 over [80, 240) us, Adam over [240 + b2,
  // 282 + b2) = [275.783, 317.783); on stream comm the three bucket all-reduces (b0, b1, b2 =
  // kBucketUs): [140, 192.087), [192.087, 231.130), [240, 275.783) us.
  // 4 ranks × 12 ops = 48 ops in 4 × 2 lanes.
  void a_trace_written_by_the_cli_reads_back_into_the_store() {
    QTemporaryDir dir;
    const QString path = dir.filePath("ddp.json");
    models::RunRequest request;
    request.scenario = CLUSTERSIM_TEST_DATA "/ddp-by-hand.yaml";
    request.overrides = {"simulation.fold=none"};
    const models::Prediction prediction = models::predict(request);
    models::write_trace(prediction, path.toStdString());

    QString error;
    bool cancelled = true;
    const PresentationPtr p = read_trace_presentation(path, nullptr, {}, &error, &cancelled);
    QVERIFY2(p, qPrintable(error));
    QVERIFY(!cancelled);
    QVERIFY(!p->prediction);
    QCOMPARE(p->trace_path, path);
    const TimelineStore& store = p->timeline;
    QCOMPARE(store.item_count(), std::size_t{48});
    QCOMPARE(store.item_count(), prediction.output.built.schedule.ops.size());
    QCOMPARE(store.lane_count(), std::size_t{8});
    QVERIFY(near_us(store.makespan_ps(), 282 + kBucketUs[2]));
    const engine::Schedule& s = p->schedule();
    QCOMPARE(s.num_ranks, 4u);

    const auto comm = store.lane_of(2, 1);
    QVERIFY(comm);
    const auto& buckets = store.lane(*comm).items;
    QCOMPARE(buckets.size(), std::size_t{3});
    const double b0 = kBucketUs[0], b1 = kBucketUs[1], b2 = kBucketUs[2];
    const double starts[] = {140, 140 + b0, 240};
    const double ends[] = {140 + b0, 140 + b0 + b1, 240 + b2};
    const std::uint64_t bytes[] = {1'600'000, 800'000, 600'000};  // L3 + L2, L1, L0 gradients
    for (std::size_t k = 0; k < 3; ++k) {
      QVERIFY(near_us(buckets[k].start_ps, starts[k]));
      QVERIFY(near_us(buckets[k].end_ps, ends[k]));
      const engine::Op& op = s.ops[buckets[k].op];
      QCOMPARE(QString::fromStdString(s.label(op)),
               QStringLiteral("ddp bucket %1 all_reduce").arg(k));
      QCOMPARE(op.category, engine::Category::dp_comm);
      QCOMPARE(op.bytes, bytes[k]);
      QCOMPARE(s.groups[op.group_or_peer].ranks, (std::vector<engine::Rank>{0, 1, 2, 3}));
    }
    const auto& compute = store.lane(*store.lane_of(2, 0)).items;
    QCOMPARE(compute.size(), std::size_t{9});
    QCOMPARE(QString::fromStdString(s.label(s.ops[compute.front().op])), QString("L0 fwd mb0"));
    QCOMPARE(s.flops(s.ops[compute.front().op]), 4e9);
    QCOMPARE(compute.front().end_ps, std::int64_t{40'000'000});
    QCOMPARE(QString::fromStdString(s.label(s.ops[compute.back().op])), QString("optimizer step"));
    QVERIFY(near_us(compute.back().start_ps, 240 + kBucketUs[2]));

    // A file cut short is refused with its name and the reason.
    QFile file(path);
    QVERIFY(file.open(QIODevice::ReadWrite));
    file.resize(300);
    file.close();
    QVERIFY(!read_trace_presentation(path, nullptr, {}, &error, &cancelled));
    QVERIFY2(error.startsWith("error: " + path + ": not valid JSON"), qPrintable(error));
  }
};

QTEST_GUILESS_MAIN(GuiTimelineTest)
#include "test_gui_timeline.moc"
