// gui/models without a display: every expected figure is worked out by hand from the inputs.
#include <QAbstractItemModelTester>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>
#include <numeric>

#include "calibrate/profile.hpp"
#include "engine/schedule.hpp"
#include "engine/timeline.hpp"
#include "gui/models/calibration_curves.hpp"
#include "gui/models/compare_model.hpp"
#include "gui/models/csv.hpp"
#include "gui/models/op_relations.hpp"
#include "gui/models/prediction_tables.hpp"
#include "gui/models/presentation.hpp"
#include "gui/models/rank_filter.hpp"
#include "gui/models/run_controller.hpp"
#include "gui/models/segment_table.hpp"
#include "gui/models/summary_model.hpp"
#include "gui/models/sweep_table.hpp"
#include "gui/models/time_axis.hpp"
#include "gui/models/timeline_store.hpp"
#include "gui/models/topology_layout.hpp"
#include "timeline_fixture.hpp"

using namespace clustersim;
using namespace clustersim::gui;
using clustersim::gui::test::timeline_of;

namespace {

const QString kScenarios = QStringLiteral(CLUSTERSIM_SCENARIOS_DIR);

}  // namespace

class GuiModelsTest : public QObject {
  Q_OBJECT

 private slots:
  void time_axis_maps_and_zooms_at_the_anchor() {
    TimeAxis axis(2.0, 1e-3);  // pixel 0 is 2 s, a pixel is 1 ms
    QCOMPARE(axis.to_pixel(2.5), 500.0);
    QCOMPARE(axis.to_time(250), 2.25);
    axis.zoom_at(400, 2.0);  // 2.4 s stays under pixel 400, a pixel is now 0.5 ms
    QCOMPARE(axis.seconds_per_pixel(), 0.5e-3);
    QVERIFY(qFuzzyCompare(axis.to_time(400), 2.4));
    QVERIFY(qFuzzyCompare(axis.origin_s(), 2.2));
    axis.pan_pixels(100);  // dragging right by 100 px shows 50 ms earlier
    QVERIFY(qFuzzyCompare(axis.origin_s(), 2.15));
    axis.fit(0.0, 10.0, 1000);
    QCOMPARE(axis.origin_s(), 0.0);
    QCOMPARE(axis.seconds_per_pixel(), 0.01);
    axis.zoom_at(0, 1e30);  // never finer than a picosecond per pixel
    QCOMPARE(axis.seconds_per_pixel(), TimeAxis::kMinSecondsPerPixel);
  }

  void store_finds_the_visible_range_and_merges_sub_pixel_ops() {
    // Lane 0: 1,000 ops of 5 ps every 10 ps. Lane 1: one 5,000 ps op, then ops of 5 ps.
    engine::ScheduleBuilder b(2);
    const auto compute = b.stream("compute");
    std::vector<std::int64_t> starts, ends;
    for (int i = 0; i < 1000; ++i) {
      b.compute({.rank = 0, .stream = compute, .name = "op"}, 1.0, 0);
      starts.push_back(10 * i);
      ends.push_back(10 * i + 5);
    }
    b.compute({.rank = 1, .stream = compute, .name = "wide"}, 1.0, 0);
    starts.push_back(0);
    ends.push_back(5000);
    for (int i = 0; i < 10; ++i) {
      b.compute({.rank = 1, .stream = compute, .name = "op"}, 1.0, 0);
      starts.push_back(5000 + 10 * i);
      ends.push_back(5005 + 10 * i);
    }
    const engine::Schedule s = std::move(b).finish();
    const TimelineStore store = TimelineStore::build(s, timeline_of(starts, ends));
    QCOMPARE(store.lane_count(), std::size_t{2});
    QCOMPARE(store.item_count(), s.ops.size());
    QCOMPARE(store.makespan_ps(), std::int64_t{9995});
    QCOMPARE(store.lane_of(1, compute), std::optional<std::size_t>(1));
    QVERIFY(!store.lane_of(2, compute));

    // Op i overlaps [100, 200) when 10i + 5 > 100 and 10i < 200: i = 10..19.
    QCOMPARE(store.visible(0, 100, 200), (std::pair<std::size_t, std::size_t>{10, 20}));
    QCOMPARE(store.visible(0, 20000, 30000).first, store.visible(0, 20000, 30000).second);

    // 100 ps a pixel over 100 pixels: each column holds 10 whole ops, which merge into one span.
    const TimeAxis axis(0.0, 100e-12);
    const auto spans = store.spans(0, axis, 100);
    QCOMPARE(spans.size(), std::size_t{100});
    for (std::size_t c = 0; c < spans.size(); ++c) {
      QCOMPARE(spans[c].count, 10u);
      QCOMPARE(spans[c].start_ps, static_cast<std::int64_t>(100 * c));
      QCOMPARE(spans[c].end_ps, static_cast<std::int64_t>(100 * c + 95));
    }
    // Zoomed in to 1 ps a pixel, nothing merges: the 10 ops of [0, 100) are 10 spans.
    QCOMPARE(store.spans(0, TimeAxis(0.0, 1e-12), 100).size(), std::size_t{10});
    // The wide op stays alone; the ten 5 ps ops after it (5000..5095) share column 50.
    const auto lane1 = store.spans(1, axis, 100);
    QCOMPARE(lane1.size(), std::size_t{2});
    QCOMPARE(lane1[0].count, 1u);
    QCOMPARE(lane1[0].end_ps, std::int64_t{5000});
    QCOMPARE(lane1[1].count, 10u);

    // Hover: 103 ps is inside op 10; 107 ps is in the gap, 2 ps from op 10 and 3 ps from op 11.
    QCOMPARE(store.op_at(0, 103, 0), std::optional<engine::OpId>(10));
    QVERIFY(!store.op_at(0, 107, 0));
    QCOMPARE(store.op_at(0, 107, 3), std::optional<engine::OpId>(10));
  }

  void store_searches_lanes_whose_ops_overlap() {
    // A long op first: ends are not sorted, so the search goes by the running maximum of ends.
    engine::ScheduleBuilder b(1);
    const auto stream = b.stream("comm");
    for (int i = 0; i < 3; ++i)
      b.compute({.rank = 0, .stream = stream, .name = "op"}, 1.0, 0);
    const auto s = std::move(b).finish();
    const TimelineStore store = TimelineStore::build(s, timeline_of({0, 10, 30}, {1000, 20, 40}));
    QVERIFY(!store.lane(0).reach_ps.empty());
    // From the first op reaching past 500 (op 0) to the last starting before 600 (op 2): the
    // range holds every overlapping op, and on such a lane the short ones in between too.
    QCOMPARE(store.visible(0, 500, 600), (std::pair<std::size_t, std::size_t>{0, 3}));
    QCOMPARE(store.visible(0, 1000, 2000), (std::pair<std::size_t, std::size_t>{3, 3}));
    QCOMPARE(store.visible(0, 15, 35), (std::pair<std::size_t, std::size_t>{0, 3}));
  }

  void relations_find_dependencies_peers_and_partner() {
    engine::ScheduleBuilder b(3);
    const auto stream = b.stream("comm");
    const auto g = b.add_group({0, 1, 2}, "dp");
    std::vector<std::vector<engine::OpId>> collectives(3);
    for (int round = 0; round < 2; ++round)
      for (engine::Rank r = 0; r < 3; ++r)
        collectives[r].push_back(b.collective({.rank = r, .stream = stream, .name = "ar"},
                                              engine::CollectiveType::all_reduce, g, 1024));
    const engine::OpId send0 = b.send({.rank = 0, .stream = stream, .name = "s"}, 1, 8, 7);
    const engine::OpId send1 = b.send({.rank = 0, .stream = stream, .name = "s"}, 1, 8, 7);
    const engine::OpId recv0 = b.recv({.rank = 1, .stream = stream, .name = "r"}, 0, 8, 7);
    const engine::OpId recv1 = b.recv({.rank = 1, .stream = stream, .name = "r"}, 0, 8, 7);
    const std::vector<engine::OpId> deps{collectives[2][0], collectives[2][1]};
    const engine::OpId after =
        b.compute({.rank = 2, .stream = stream, .name = "c", .deps = deps}, 1.0, 0);
    const auto s = std::move(b).finish();

    const OpRelations second = relations_of(s, collectives[1][1]);
    QCOMPARE(second.peers, (std::vector<engine::OpId>{collectives[0][1], collectives[2][1]}));
    QVERIFY(!second.partner);
    QCOMPARE(relations_of(s, send1).partner, std::optional<engine::OpId>(recv1));
    QCOMPARE(relations_of(s, recv0).partner, std::optional<engine::OpId>(send0));
    QCOMPARE(relations_of(s, after).dependencies, deps);
  }

  // The tooltip's line for a communication op: a collective's group and how it ran; a send's or
  // recv's peer, the group whose communicator it was posted on, and its channels. A timeline
  // without the algorithm, protocol and channels (a .pftrace read back) leaves them out.
  void transfer_text_says_how_an_op_ran() {
    engine::ScheduleBuilder b(3);
    const engine::StreamId stream = b.stream("comm");
    const engine::GroupId dp = b.add_group({0, 1}, "dp[0]");
    b.post_sends_on(b.add_group({0, 1}, "pp[0]"));
    const engine::OpId ar = b.collective({.rank = 0, .stream = stream, .name = "ar"},
                                         engine::CollectiveType::all_reduce, dp, 64);
    const engine::OpId send = b.send({.rank = 0, .stream = stream, .name = "s"}, 1, 64, 0);
    const engine::OpId recv = b.recv({.rank = 1, .stream = stream, .name = "r"}, 0, 64, 0);
    const engine::OpId pair = b.send({.rank = 1, .stream = stream, .name = "s2"}, 2, 64, 1);
    const engine::OpId fwd = b.compute({.rank = 2, .stream = stream, .name = "f"}, 1.0, 0);
    const auto s = std::move(b).finish();
    engine::Timeline tl;
    tl.algorithm = {engine::Algorithm::ring, engine::Algorithm::direct, engine::Algorithm::direct,
                    engine::Algorithm::direct, engine::Algorithm::automatic};
    tl.protocol.assign(5, engine::Protocol::simple);
    tl.channels = {16, 4, 4, 1, 0};
    QCOMPARE(transfer_text(s, tl, ar),
             std::string("all_reduce on dp[0] · ring / Simple · 16 channels"));
    QCOMPARE(transfer_text(s, tl, send), std::string("send to rank 1 on pp[0] · 4 channels"));
    QCOMPARE(transfer_text(s, tl, recv), std::string("recv from rank 0 on pp[0] · 4 channels"));
    QCOMPARE(transfer_text(s, tl, pair), std::string("send to rank 2 · 1 channel"));
    QCOMPARE(transfer_text(s, tl, fwd), std::string());
    QCOMPARE(transfer_text(s, engine::Timeline{}, ar), std::string("all_reduce on dp[0]"));
  }

  void segment_table_model_sums_rows_and_marks_one() {
    SegmentTableModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    SegmentTable table;
    table.unit = "s";
    table.segments = {"compute", "idle"};
    table.rows = {"rank 0", "rank 1"};
    table.values = {{1.5e-3, 0.5e-3}, {1e-3, 1e-3}};
    table.marked_row = 1;
    model.set_table(table);
    QCOMPARE(model.rowCount(), 2);
    QCOMPARE(model.columnCount(), 3);  // two segments and the total
    QCOMPARE(model.data(model.index(0, 2), SegmentTableModel::kValueRole).toDouble(), 2e-3);
    QCOMPARE(model.data(model.index(0, 0), Qt::DisplayRole).toString(), QString("1.5 ms"));
    QCOMPARE(model.headerData(1, Qt::Vertical, SegmentTableModel::kMarkedRole).toBool(), true);
    QCOMPARE(model.headerData(0, Qt::Vertical, SegmentTableModel::kMarkedRole).toBool(), false);
    QCOMPARE(
        to_csv(model, SegmentTableModel::kValueRole),
        QString(",compute,idle,total\nrank 0,0.0015,0.0005,0.002\nrank 1,0.001,0.001,0.002\n"));
    QCOMPARE(format_si(3.4e9, "B"), QString("3.4 GB"));
    QCOMPARE(format_si(0, "s"), QString("0 s"));
  }

  // Two results written by hand: B runs 1.5 s against A's 2 s, at 0.5 MFU against 0.4, with
  // 50 GB against 40 GB and a tight verdict; its tokens/s are unknown (null, a Chakra workload).
  void compare_shows_both_results_and_their_differences() {
    QTemporaryDir dir;
    auto write = [&](const QString& name, const char* text) {
      QFile f(dir.filePath(name));
      QVERIFY(f.open(QIODevice::WriteOnly));
      f.write(text);
    };
    write("a.json",
          R"({"iteration_time_s": 2.0, "tokens_per_s": 1000, "tflops_per_gpu": 100.0, "mfu": 0.4,
              "bubble_fraction": 0.1, "exposed_comm_s": {"total": 0.2, "dp": 0.2},
              "breakdown_s": {"compute": 1.6}, "world_size": 8, "network_model": "flow",
              "memory": {"peak_bytes_per_gpu": 40e9, "verdict": "fits"}})");
    write("b.json",
          R"({"iteration_time_s": 1.5, "tokens_per_s": null, "tflops_per_gpu": 125.0, "mfu": 0.5,
              "bubble_fraction": 0.1, "exposed_comm_s": {"total": 0.1, "dp": 0.1},
              "breakdown_s": {"compute": 1.2}, "world_size": 8, "network_model": "flow",
              "memory": {"peak_bytes_per_gpu": 50e9, "verdict": "tight"}})");
    write("no-time.json", R"({"tokens_per_s": 1})");
    CompareModel model;
    QAbstractItemModelTester tester(&model);
    model.set_a(read_result_file(dir.filePath("a.json")));
    model.set_b(read_result_file(dir.filePath("b.json")));
    using C = CompareModel;
    QCOMPARE(model.text("iteration time", C::kA), QString("2 s"));
    QCOMPARE(model.text("iteration time", C::kB), QString("1.5 s"));
    QCOMPARE(model.text("iteration time", C::kDifference), QString("-500 ms"));
    QCOMPARE(model.text("iteration time", C::kChange), QString("-25.0 %"));
    QCOMPARE(model.text("MFU", C::kDifference), QString("+10.0 pp"));
    QCOMPARE(model.text("MFU", C::kChange), QString("+25.0 %"));
    QCOMPARE(model.text("TFLOP/s per GPU", C::kDifference), QString("+25.0"));
    QCOMPARE(model.text("memory per GPU", C::kDifference), QString("+10 GB"));
    QCOMPARE(model.text("memory verdict", C::kDifference), QString("differs"));
    QCOMPARE(model.text("network model", C::kDifference), QString("same"));
    QCOMPARE(model.text("pipeline bubble", C::kChange), QString("0.0 %"));
    QCOMPARE(model.text("tokens/s", C::kB), QString("unknown"));
    QCOMPARE(model.text("tokens/s", C::kDifference), QString());
    QCOMPARE(model.headerData(C::kA, Qt::Horizontal, Qt::DisplayRole).toString(),
             QString("A: a.json"));
    // A file that is not a result names the key it lacks; one that is not JSON says so.
    auto refused = [&](const QString& name, const QString& because) {
      try {
        read_result_file(dir.filePath(name));
      } catch (const ResultFileError& e) {
        return QString(e.what()).contains(name + because);
      }
      return false;
    };
    QVERIFY(refused("no-time.json", ": key iteration_time_s is missing"));
    write("text.json", "iteration: 1");
    QVERIFY(refused("text.json", ": not JSON"));
  }

  // Two axes, 3 × 2 points, one invalid: a curve per value of the second axis, by the first's
  // numeric value (given out of order), the invalid point left out but listed with its reason.
  void sweep_curves_group_by_the_second_key() {
    models::SweepResult r;
    r.axes = {{"parallel.bucket_mb", {"100", "1", "25"}}, {"parallel.tp", {"1", "2"}}};
    auto row = [](std::size_t i, std::string a, std::string b, double t) {
      models::SweepRow x;
      x.index = i;
      x.values = {std::move(a), std::move(b)};
      x.result = {{"iteration_time_s", t}, {"memory.fits", true}};
      return x;
    };
    r.rows = {row(0, "100", "1", 3.0), row(1, "100", "2", 2.0), row(2, "1", "1", 5.0),
              row(3, "1", "2", 4.0),   row(4, "25", "1", 1.0),  row(5, "25", "2", 0.5)};
    r.rows[4].status = models::SweepStatus::invalid;
    r.rows[4].reason = "tp 1 does not fit";
    const auto series = sweep_series(r, "iteration_time_s");
    QCOMPARE(series.size(), std::size_t{2});
    QCOMPARE(series[0].name, QString("parallel.tp=1"));
    QCOMPARE(series[0].points, (QVector<QPointF>{{1, 5.0}, {100, 3.0}}));
    QCOMPARE(series[0].rows, (std::vector<std::size_t>{2, 0}));
    QCOMPARE(series[1].points, (QVector<QPointF>{{1, 4.0}, {25, 0.5}, {100, 2.0}}));
    // Values that are not all numbers plot at their positions.
    r.axes[0].values = {"ddp", "zero1", "fsdp"};
    for (auto& x : r.rows)
      x.values[0] = x.values[0] == "100" ? "ddp" : x.values[0] == "1" ? "zero1" : "fsdp";
    QCOMPARE(sweep_series(r, "iteration_time_s")[0].points, (QVector<QPointF>{{0, 3.0}, {1, 5.0}}));

    SweepTableModel table;
    QAbstractItemModelTester tester(&table);
    table.set_result(std::make_shared<const models::SweepResult>(r));
    QCOMPARE(table.rowCount(), 6);
    QCOMPARE(table.headerData(0, Qt::Horizontal, Qt::DisplayRole).toString(),
             QString("parallel.bucket_mb"));
    QCOMPARE(table.index(4, 2).data().toString(), QString("invalid"));
    QCOMPARE(table.index(4, 3).data().toString(), QString("tp 1 does not fit"));
    QCOMPARE(table.index(0, 3).data().toString(), QString("3 s"));
    QCOMPARE(table.overrides(3), (QStringList{"parallel.bucket_mb=zero1", "parallel.tp=2"}));
  }

  // The DDP scenario worked out by hand (tests/models/test_ddp.cpp) on the ideal network: the
  // backward of 240 us per micro-batch and the 42 us Adam step, so m micro-batches per GPU take
  // m × 240 + 42 us: global batches 4, 8, 16 on 4 GPUs are 282, 522 and 1002 us.
  void sweep_runs_in_the_background_as_worked_out_by_hand() {
    SweepController controller;
    QSignalSpy finished(&controller, &SweepController::finished);
    RunInput input{QStringLiteral(CLUSTERSIM_TEST_DATA "/ddp-by-hand.yaml"),
                   {},
                   {"simulation.network_model=ideal"}};
    QString error;
    QVERIFY(!controller.start(input, {"training.global_batch"}, &error));
    QVERIFY2(error.contains("training.global_batch"), qPrintable(error));
    QVERIFY2(controller.start(input, {"training.global_batch=4,8,16"}, &error), qPrintable(error));
    QVERIFY(finished.wait(60000));
    const auto result = finished.at(0).at(0).value<SweepResultPtr>();
    const auto series = sweep_series(*result, "iteration_time_s");
    QCOMPARE(series.size(), std::size_t{1});
    const QVector<double> expected = {282e-6, 522e-6, 1002e-6};
    QCOMPARE(series[0].points.size(), expected.size());
    for (qsizetype i = 0; i < expected.size(); ++i)
      QVERIFY(std::abs(series[0].points[i].y() - expected[i]) < 1e-11);
  }

  // A profile written by hand: an 8-GPU all-reduce fit (bus factor 1.75; α 20 us and 10 GB/s up
  // to 64 KiB, α 30 us and 200 GB/s above) and two measurements. At 1 MiB the fit gives
  // 1 MiB·1.75 / (30 us + 1 MiB·1.75 / 200 GB/s) = 1,835,008 B / 39.17504 us = 46.84 GB/s.
  void calibration_curves_put_measurements_beside_the_fit() {
    QTemporaryDir dir;
    calibrate::Profile p;
    p.provenance.gpu = "NVIDIA A100-SXM4-80GB";
    p.provenance.backend = "nccl-tests";
    p.provenance.ranks = 8;
    engine::CollectiveFit fit;
    fit.shape = {8, 1};
    fit.bus_factor = 1.75;
    fit.ranges = {{8, 65536, 20e-6, 10e9, 0.02}, {131072, 1073741824, 30e-6, 200e9, 0.01}};
    p.collectives = engine::CollectiveProfile({fit});
    auto row = [](double bytes, double busbw) {
      calibrate::CollectiveMeasurement m;
      m.collective = "all_reduce";
      m.ranks = 8;
      m.bytes = bytes;
      m.count = static_cast<std::uint64_t>(bytes / 4);
      m.dtype = "float";
      m.busbw = busbw;
      m.algbw = busbw / 1.75;
      m.seconds = bytes / m.algbw;
      return m;
    };
    p.measurements.collectives = {row(1048576, 45e9), row(65536, 5e9)};
    p.measurements.gemms = {{8192, 8192, 8192, "bf16", 4e-3}};
    const QString path = dir.filePath("p.json");
    calibrate::write_profile(p, path.toStdString());
    QVERIFY(is_calibration_profile(path));
    const CalibrationData d = read_calibration_data(path);
    QCOMPARE(d.curves.size(), std::size_t{1});
    QCOMPARE(d.curves[0].name, QString("all_reduce, 8 ranks on 1 node"));
    QCOMPARE(d.curves[0].measured, (QVector<QPointF>{{65536, 5e9}, {1048576, 45e9}}));
    QCOMPARE(d.curves[0].fitted.size(), 48);
    QCOMPARE(d.curves[0].fitted.front().x(), 8.0);
    QVERIFY(std::abs(d.curves[0].fitted.back().x() - 1073741824.0) < 1e-3);
    const double expected = 1048576 * 1.75 / (30e-6 + 1048576 * 1.75 / 200e9);
    QVERIFY(std::abs(fitted_busbw(fit, 1048576) - expected) < 1e-6 * expected);
    QVERIFY(std::abs(expected - 46.84e9) < 0.01e9);
    // The GEMM: 2·8192³ FLOPs in 4 ms = 274.9 TFLOP/s.
    GemmTableModel gemms;
    QAbstractItemModelTester tester(&gemms);
    gemms.set_gemms(d.gemms);
    QCOMPARE(gemms.index(0, 5).data().toString(), QString("274.9"));
    QCOMPARE(curve_csv(d.curves[0]).count('\n'), 1 + 2 + 48);
  }

  void csv_quotes_fields_with_commas_and_quotes() {
    SegmentTableModel model;
    SegmentTable table;
    table.segments = {"a,b"};
    table.rows = {"say \"hi\""};
    table.values = {{1}};
    model.set_table(table);
    QCOMPARE(to_csv(model, SegmentTableModel::kValueRole),
             QString(",\"a,b\",total\n\"say \"\"hi\"\"\",1,1\n"));
  }

  void tables_of_a_prediction_add_up() {
    QString error;
    const auto p = run_prediction({kScenarios + "/llama2-7b-pcie-pp4.yaml", {}, {}}, nullptr, {},
                                  &error, nullptr);
    QVERIFY2(p, qPrintable(error));
    const auto& r = p->output.result;
    // Every instant of every rank's iteration is attributed once: each row sums to the iteration.
    SegmentTableModel breakdown;
    QAbstractItemModelTester tester(&breakdown,
                                    QAbstractItemModelTester::FailureReportingMode::QtTest);
    breakdown.set_table(breakdown_table(*p));
    QCOMPARE(breakdown.rowCount(), 8);  // 8 GPUs
    for (int row = 0; row < 8; ++row)
      QVERIFY(std::abs(breakdown.table().row_total(row) - r.iteration_time_s) <
              1e-9 * r.iteration_time_s);
    QCOMPARE(breakdown.table().marked_row, std::optional<int>(static_cast<int>(r.critical_rank)));

    // pp 4: a row per stage; the peak stage's row holds what the GPU must hold at the peak.
    const SegmentTable memory = memory_table(*p);
    QCOMPARE(memory.rows.size(), 4);
    QVERIFY(memory.marked_row);
    const double peak_total = memory.row_total(*memory.marked_row);
    QVERIFY(std::abs(peak_total - r.memory.total()) < 1e-6 * r.memory.total());
    QCOMPARE(memory.limit, std::optional<double>(r.memory.capacity));

    // 8 GPUs on one node, pp 4 × dp 2 (tp 1): rank = dp + 2 · stage, tp and dp varying first.
    using R = std::vector<engine::Rank>;
    QCOMPARE(ranks_in(RankScope::stage, 5, *p), (R{4, 5}));
    QCOMPARE(ranks_in(RankScope::replica, 0, *p), (R{0, 2, 4, 6}));
    QCOMPARE(ranks_in(RankScope::replica, 3, *p), (R{1, 3, 5, 7}));
    QCOMPARE(ranks_in(RankScope::node, 3, *p), (R{0, 1, 2, 3, 4, 5, 6, 7}));
    QCOMPARE(ranks_in(RankScope::all, 0, *p).size(), std::size_t{8});

    SummaryModel summary;
    QAbstractItemModelTester summary_tester(&summary,
                                            QAbstractItemModelTester::FailureReportingMode::QtTest);
    summary.set_prediction(p);
    QCOMPARE(summary.value("GPUs"), QString("8"));
    QCOMPARE(summary.value("iteration time"), format_si(r.iteration_time_s, "s"));
    QVERIFY(summary.value("to fit, together").isEmpty());  // it fits
  }

  void summary_lists_what_makes_an_oversized_plan_fit() {
    // Llama 2 7B with DDP at micro-batch 16 and no recompute needs several times the 80 GB.
    QString error;
    const auto p = run_prediction(
        {kScenarios + "/llama2-7b-ddp-2xdgx-a100.yaml",
         {},
         {"training.micro_batch=16", "training.global_batch=256", "training.recompute=none"}},
        nullptr, {}, &error, nullptr);
    QVERIFY2(p, qPrintable(error));
    const auto& m = p->output.result.memory;
    QCOMPARE(m.verdict(), models::MemoryVerdict::does_not_fit);
    QVERIFY(m.combined.has_value());
    SummaryModel summary;
    summary.set_prediction(p);
    const QString together = summary.value("to fit, together");
    for (const auto& change : m.combined->changes)
      QVERIFY2(together.contains(QString::fromStdString("--set " + change)), qPrintable(together));
    QVERIFY(together.endsWith("(fits)"));
    QVERIFY(summary.value("to fit, alone").startsWith("--set "));
    QVERIFY(summary.value("memory at start-up").isEmpty());  // the model arrives sharded
  }

  void summary_shows_start_ups_peak_when_the_model_is_built_on_the_gpu() {
    // Llama 2 7B (6,738,415,616 parameters, a layer 202,383,360) built whole in fp32 on each GPU
    // before FSDP shards it: 4 B × (the model + one layer) before the CUDA context.
    QString error;
    const auto p = run_prediction(
        {kScenarios + "/llama2-7b-ddp-2xdgx-a100.yaml",
         {},
         {"parallel.data_parallel=fsdp", "parallel.fsdp.init=device", "training.precision=fp32"}},
        nullptr, {}, &error, nullptr);
    QVERIFY2(p, qPrintable(error));
    const auto& m = p->output.result.memory;
    QCOMPARE(m.startup_peak, 4.0 * (6738415616.0 + 202383360.0));
    SummaryModel summary;
    summary.set_prediction(p);
    QCOMPARE(summary.value("memory at start-up"),
             format_si(m.startup_peak + m.overheads.cuda_context, "B") + " of " +
                 format_si(m.capacity, "B"));
  }

  void topology_lays_out_by_tier_and_pairs_directions() {
    // Two GPUs under one NVSwitch: GPUs on the bottom row at 1/4 and 3/4, the switch alone at 1/2.
    engine::Topology t;
    const auto sw = t.add_vertex(engine::VertexKind::nvswitch, "sw", 0);
    const auto g0 = t.gpu_vertex(t.add_gpu("gpu0", 0));
    const auto g1 = t.gpu_vertex(t.add_gpu("gpu1", 0));
    const auto bandwidth = engine::Bandwidth::bytes_per_second(100.0);
    t.add_link(g0, sw, bandwidth, engine::Time::zero(), engine::LinkKind::nvlink);
    t.add_link(g1, sw, bandwidth, engine::Time::zero(), engine::LinkKind::nvlink);
    // Over 2 iterations of 1 s: gpu0→sw carried 100 B (50 B per iteration: busy 0.5 s of 1 s).
    std::vector<double> bytes(t.num_links(), 0.0);
    bytes[0] = 100.0;
    const TopologyLayout layout = layout_topology(t, bytes, 1.0, 2);
    QCOMPARE(layout.vertices[sw].tier, tier_of(engine::VertexKind::nvswitch));
    QCOMPARE(layout.vertices[sw].x, 0.5);
    QCOMPARE(layout.vertices[g0].x, 0.25);
    QCOMPARE(layout.vertices[g1].x, 0.75);
    QCOMPARE(layout.tier_sizes[static_cast<std::size_t>(tier_of(engine::VertexKind::gpu))], 2);
    QCOMPARE(layout.cables.size(), std::size_t{2});  // four directed links, two cables
    QCOMPARE(layout.cables[0].links.size(), std::size_t{2});
    QCOMPARE(layout.cables[0].bytes, 50.0);
    QCOMPARE(layout.cables[0].busy_s, 0.5);
    QCOMPARE(layout.cables[0].utilization, 0.5);
    QCOMPARE(layout.cables[1].utilization, 0.0);
    QCOMPARE(cables_csv(t, layout).count('\n'), 3);
  }

  void topology_puts_core_switches_above_spines_and_leaves() {
    // A three-level fat tree's tiers from the top: cores, spines, leaves, each on a row of its own.
    engine::Topology t;
    const auto leaf = t.add_vertex(engine::VertexKind::leaf_switch, "leaf0", -1);
    const auto spine = t.add_vertex(engine::VertexKind::spine_switch, "pod0.spine0", -1);
    const auto core = t.add_vertex(engine::VertexKind::core_switch, "core0", -1);
    const auto bandwidth = engine::Bandwidth::bytes_per_second(100.0);
    t.add_link(leaf, spine, bandwidth, engine::Time::zero(), engine::LinkKind::ib);
    t.add_link(spine, core, bandwidth, engine::Time::zero(), engine::LinkKind::ib);
    const TopologyLayout layout =
        layout_topology(t, std::vector<double>(t.num_links(), 0.0), 1.0, 1);
    QCOMPARE(layout.vertices[core].tier, 0);
    QCOMPARE(layout.vertices[spine].tier, 1);
    QCOMPARE(layout.vertices[leaf].tier, 2);
    QCOMPARE(layout.cables.size(), std::size_t{2});
  }

  void a_bad_value_reports_the_cli_message() {
    RunController runner;
    QSignalSpy failed(&runner, &RunController::failed);
    runner.start({kScenarios + "/resnet50-ddp-dgx-a100.yaml", {}, {"parallel.tp=abc"}});
    QVERIFY(failed.wait(60000));
    // What `clustersim run FILE --set parallel.tp=abc` prints.
    QCOMPARE(failed.first().at(1).toString(),
             QString("error: --set parallel.tp=abc: parallel.tp: 'abc' is not an integer; "
                     "allowed: integers from 1 to 262144"));
  }

  void a_newer_request_drops_the_stale_run() {
    RunController runner;
    runner.set_debounce_ms(10);
    QSignalSpy finished(&runner, &RunController::finished);
    QSignalSpy cancelled(&runner, &RunController::cancelled);
    runner.start({kScenarios + "/llama3-70b-8xdgx-h100-interleaved.yaml", {}, {}});
    const quint64 stale = runner.latest_job();
    runner.request({kScenarios + "/resnet50-ddp-dgx-a100.yaml", {}, {}});
    QVERIFY(finished.wait(120000));
    runner.wait_idle();
    QCOMPARE(finished.size(), 1);
    QCOMPARE(finished.first().at(0).value<quint64>(), stale + 1);
    QCOMPARE(cancelled.size(), 0);  // the stale run reports nothing at all
    const auto p = finished.first().at(1).value<PresentationPtr>()->prediction;
    QCOMPARE(QString::fromStdString(p->scenario.name), QString("resnet50-ddp-dgx-a100"));
  }

  void cancel_stops_a_long_run() {
    RunController runner;
    QSignalSpy cancelled(&runner, &RunController::cancelled);
    QSignalSpy progress(&runner, &RunController::progress);
    QSignalSpy finished(&runner, &RunController::finished);
    runner.start({kScenarios + "/llama3-70b-8xdgx-h100-interleaved.yaml", {}, {}});
    // Cancelled while simulating, where the engine checks the flag as it reports progress.
    while (progress.isEmpty() || progress.last().at(1).toString() != "simulating")
      QVERIFY(progress.wait(60000));
    QElapsedTimer clock;
    clock.start();
    runner.cancel();
    QVERIFY(cancelled.wait(60000));
    QCOMPARE(finished.size(), 0);
    qInfo("cancelled %lld ms after the request", static_cast<long long>(clock.elapsed()));
  }
};

QTEST_GUILESS_MAIN(GuiModelsTest)
#include "test_gui_models.moc"
