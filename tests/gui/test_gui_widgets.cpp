// The widgets on the offscreen platform: the window runs shipped scenarios, re-runs on edits,
// shows the CLI's errors, cancels, and every view exports.
#include <QChart>
#include <QChartView>
#include <QComboBox>
#include <QElapsedTimer>
#include <QFileInfo>
#include <QImage>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QSvgRenderer>
#include <QTemporaryDir>
#include <QTest>
#include <QWheelEvent>
#include <QXmlStreamReader>
#include <set>

#include "calibrate/profile.hpp"
#include "gui/widgets/calibration_view.hpp"
#include "gui/widgets/compare_view.hpp"
#include "gui/widgets/main_window.hpp"
#include "gui/widgets/scenario_editor.hpp"
#include "gui/widgets/stacked_bars_view.hpp"
#include "gui/widgets/summary_view.hpp"
#include "gui/widgets/sweep_view.hpp"
#include "gui/widgets/timeline_view.hpp"
#include "gui/widgets/topology_view.hpp"

using namespace clustersim;
using namespace clustersim::gui;

namespace {

const QString kScenarios = QStringLiteral(CLUSTERSIM_SCENARIOS_DIR);
// Under ASan + UBSan (CI's second build) open_scenario leaves out the three largest plans (the
// 64-GPU interleaved and FSDP Llama 3 70B, the 32-GPU DeepSeek-MoE; 80 % of its time there):
// their simulations run under the sanitizers in EveryScenario, and the window's code is the same
// for every scenario.
const QStringList kLeftOutWhenSanitized = {"llama3-70b-8xdgx-h100-interleaved",
                                           "llama3-70b-fsdp-tp8-4xdgx-h100",
                                           "deepseek-moe-16b-ep16-4xdgx-h100"};
#ifdef CLUSTERSIM_SANITIZED
constexpr bool kSanitized = true;
#else
constexpr bool kSanitized = false;
#endif
constexpr int kRunTimeoutMs = 300000;

// Opens `path` and waits for its run to finish.
bool open_and_wait(MainWindow& window, const QString& path) {
  QSignalSpy finished(&window.runner(), &RunController::finished);
  return window.open_file(path) && finished.wait(kRunTimeoutMs);
}

int distinct_colors(const QImage& image) {
  std::set<QRgb> colors;
  for (int y = 0; y < image.height(); y += 3)
    for (int x = 0; x < image.width(); x += 3)
      colors.insert(image.pixel(x, y));
  return static_cast<int>(colors.size());
}

}  // namespace

class GuiWidgetsTest : public QObject {
  Q_OBJECT

 private slots:
  void initTestCase() {
    QStandardPaths::setTestModeEnabled(true);  // QSettings go to a test location
    QCoreApplication::setOrganizationName("clustersim-test");
  }

  void open_scenario_data() {
    QTest::addColumn<QString>("file");
    for (const QString& name : QDir(kScenarios).entryList({"*.yaml"}, QDir::Files, QDir::Name))
      // gpt3-175b-1024: open_large_scenario, a ctest of its own; llama3-405b-16384: a benchmark
      // (minutes and more than 10 GB, docs/performance.md), not a test.
      if (!name.startsWith("gpt3-175b-1024") && !name.startsWith("llama3-405b-16384") &&
          !(kSanitized && kLeftOutWhenSanitized.contains(QFileInfo(name).completeBaseName())))
        QTest::newRow(qPrintable(name)) << kScenarios + "/" + name;
  }

  // Every shipped scenario opens, and the timeline holds one item per op of the schedule.
  void open_scenario() {
    QFETCH(QString, file);
    MainWindow window;
    QVERIFY(open_and_wait(window, file));
    const auto p = window.current();
    QVERIFY(p);
    QCOMPARE(window.timeline_view()->store().item_count(), p->output.built.schedule.ops.size());
    QCOMPARE(window.breakdown_view()->model().rowCount(), p->output.result.world_size);
    QVERIFY(!window.summary_view()->summary().value("iteration time").isEmpty());
  }

  void open_large_scenario() {
    if (qEnvironmentVariableIsEmpty("CLUSTERSIM_GUI_LARGE"))
      QSKIP("the 1,024-GPU scenario runs as ctest GuiOpen_gpt3_175b_1024xA100");
    MainWindow window;
    QSignalSpy finished(&window.runner(), &RunController::finished);
    QElapsedTimer clock;
    clock.start();
    QVERIFY(window.open_file(kScenarios + "/gpt3-175b-1024xA100.yaml"));
    QVERIFY(finished.wait(kRunTimeoutMs));
    const double simulate_s = clock.elapsed() / 1e3;
    const auto p = window.current();
    QCOMPARE(window.timeline_view()->store().item_count(), p->output.built.schedule.ops.size());

    // Loading: building the store from the prediction, as the view does.
    clock.restart();
    const TimelineStore store = TimelineStore::build(p->output.built.schedule, p->output.timeline);
    const double load_s = clock.elapsed() / 1e3;
    // Painting full-width frames (1920 × 1080), fitted and zoomed.
    TimelineView& view = *window.timeline_view();
    view.resize(1920, 1080);
    view.fit();
    QImage frame(view.size(), QImage::Format_ARGB32_Premultiplied);
    constexpr int kFrames = 10;
    clock.restart();
    for (int i = 0; i < kFrames; ++i) {
      view.zoom_at(view.plot_width() / 2, i % 2 == 0 ? 4.0 : 0.25);
      view.render(&frame);
    }
    const double frame_ms = clock.elapsed() / double(kFrames);
    // The same frames with every rank's streams folded into one row.
    view.fold_all(true);
    clock.restart();
    for (int i = 0; i < kFrames; ++i) {
      view.zoom_at(view.plot_width() / 2, i % 2 == 0 ? 4.0 : 0.25);
      view.render(&frame);
    }
    const double folded_ms = clock.elapsed() / double(kFrames);
    // The transfers over GPU 0's NIC cable (what a click in the topology finds, off the UI
    // thread), on a copy of the topology as the search makes.
    const engine::Topology topology = p->output.topology;
    std::vector<engine::LinkId> nic;
    for (engine::LinkId l = 0; l < topology.num_links(); ++l)
      if (topology.vertex(topology.link(l).src).name == "n0.nic0") nic.push_back(l);
    clock.restart();
    const OpList crossing =
        transfers_over(p->output.built.schedule, p->output.timeline, topology, nic);
    const double search_s = clock.elapsed() / 1e3;
    qInfo(
        "gpt3-175b-1024xA100: %zu ops, simulate+build %.2f s, store build %.2f s, "
        "%.1f ms a full-width frame, %.1f ms folded; %zu ops crossed n0.nic0, found in %.2f s",
        store.item_count(), simulate_s, load_s, frame_ms, folded_ms, crossing.size(), search_s);
    QVERIFY(load_s <= simulate_s);
    QVERIFY(!crossing.empty());
  }

  // Editing parallel.tp in the form re-runs (debounced) and changes the iteration time shown.
  void editing_tp_reruns() {
    MainWindow window;
    window.runner().set_debounce_ms(50);
    QVERIFY(open_and_wait(window, kScenarios + "/llama2-7b-pcie-tp4.yaml"));
    const auto before = window.current();
    QCOMPARE(before->scenario.parallel.tp, 4);
    const QString shown_before = window.summary_view()->summary().value("iteration time");

    QSignalSpy finished(&window.runner(), &RunController::finished);
    window.editor()->set_override("parallel.tp", "2");
    QVERIFY(finished.wait(kRunTimeoutMs));
    const auto after = window.current();
    QCOMPARE(after->scenario.parallel.tp, 2);
    QVERIFY(after->output.result.iteration_time_s != before->output.result.iteration_time_s);
    QVERIFY(window.summary_view()->summary().value("iteration time") != shown_before);
  }

  // An invalid value in the text shows the CLI's message and keeps the last good result.
  void invalid_value_shows_the_cli_error() {
    MainWindow window;
    window.runner().set_debounce_ms(50);
    const QString path = kScenarios + "/llama2-7b-pcie-tp4.yaml";
    QVERIFY(open_and_wait(window, path));
    const auto good = window.current();

    QSignalSpy failed(&window.runner(), &RunController::failed);
    QString text = window.editor()->text();
    QVERIFY(text.contains("\n  tp: 4\n"));  // line 14, the value at column 7
    text.replace("\n  tp: 4\n", "\n  tp: abc\n");
    window.editor()->text_edit()->setPlainText(text);
    QVERIFY(failed.wait(kRunTimeoutMs));
    // What `clustersim run FILE` prints for it.
    const QString expected = "error: " + path +
                             ":14:7: parallel.tp: 'abc' is not an integer; allowed: integers "
                             "from 1 to 262144";
    QCOMPARE(window.editor()->error_text(), expected);
    QCOMPARE(window.current(), good);
    QCOMPARE(window.timeline_view()->store().item_count(), good->output.built.schedule.ops.size());
    QCOMPARE(window.editor()->text_edit()->extraSelections().size(), 1);
    QCOMPARE(window.editor()->text_edit()->extraSelections().first().cursor.blockNumber(), 13);
  }

  void cancel_stops_a_long_run() {
    MainWindow window;
    QSignalSpy progress(&window.runner(), &RunController::progress);
    QSignalSpy cancelled(&window.runner(), &RunController::cancelled);
    QVERIFY(window.open_file(kScenarios + "/llama3-70b-8xdgx-h100-interleaved.yaml"));
    QVERIFY(progress.wait(kRunTimeoutMs));
    window.runner().cancel();
    QVERIFY(cancelled.wait(kRunTimeoutMs));
    QVERIFY(!window.current());
    QVERIFY(window.status_text().contains("cancelled"));
  }

  // Ctrl+wheel zooms about the cursor; a click on a collective highlights its peers.
  void timeline_zooms_at_the_cursor_and_highlights_peers() {
    MainWindow window;
    QVERIFY(open_and_wait(window, kScenarios + "/resnet50-ddp-dgx-a100.yaml"));
    TimelineView& view = *window.timeline_view();
    view.resize(1000, 400);
    view.fit();
    const double span_s = window.current()->output.timeline.makespan.seconds();
    QVERIFY(std::abs(view.axis().seconds_per_pixel() - span_s / (1000 - view.plot_left())) <
            1e-9 * span_s);

    const QPointF cursor(view.plot_left() + 300, 100);
    const double under_cursor = view.axis().to_time(300);
    const double scale = view.axis().seconds_per_pixel();
    QWheelEvent wheel(cursor, view.mapToGlobal(cursor), {}, QPoint(0, 120), Qt::NoButton,
                      Qt::ControlModifier, Qt::NoScrollPhase, false);
    QCoreApplication::sendEvent(&view, &wheel);
    QVERIFY(std::abs(view.axis().to_time(300) - under_cursor) < 1e-9 * span_s);
    QVERIFY(std::abs(view.axis().seconds_per_pixel() - scale / 1.25) < 1e-12 * scale);
    view.undo_zoom();
    QCOMPARE(view.axis().seconds_per_pixel(), scale);

    // DDP on 8 GPUs: every gradient all-reduce runs on a group of 8, so 7 peers light up.
    const auto& schedule = window.current()->output.built.schedule;
    engine::OpId all_reduce = 0;
    while (schedule.ops[all_reduce].kind != engine::OpKind::collective)
      ++all_reduce;
    // Filtering to rank 3 shows exactly the streams rank 3's ops run on.
    std::set<engine::StreamId> streams_of_rank3;
    for (const auto& op : schedule.ops)
      if (op.rank == 3) streams_of_rank3.insert(op.stream);
    view.set_ranks({3});
    QCOMPARE(view.shown_rows().size(), streams_of_rank3.size());
    for (const LaneRange& row : view.shown_rows())
      QCOMPARE(view.store().lane(row.first).rank, 3u);
    view.set_ranks({});
    QCOMPARE(view.shown_rows().size(), view.store().lane_count());

    view.select_op(all_reduce);
    const auto deps = schedule.dependencies(schedule.ops[all_reduce]);
    QCOMPARE(view.highlighted_ops().size(), deps.size() + 7);
    QVERIFY(view.describe(all_reduce).contains("all_reduce"));
  }

  // One DGX A100 running ResNet-50 DDP: every gradient all-reduce is over all 8 GPUs, and GPU 0
  // reaches the others only through its NVLink to the NVSwitch (a PCIe path is as short but
  // narrower), so clicking that cable selects every all-reduce in the timeline. A single node's
  // NICs carry nothing: clicking GPU 0's NIC cable selects no op.
  void topology_link_selects_its_transfers_in_the_timeline() {
    MainWindow window;
    QVERIFY(open_and_wait(window, kScenarios + "/resnet50-ddp-dgx-a100.yaml"));
    TopologyView& topology = *window.topology_view();
    topology.resize(1200, 700);
    const auto& graph = window.current()->output.topology;
    auto cable_named = [&](const std::string& a, const std::string& b) {
      const auto& cables = topology.layout_data().cables;
      for (std::size_t i = 0; i < cables.size(); ++i) {
        const std::set<std::string> ends{graph.vertex(cables[i].a).name,
                                         graph.vertex(cables[i].b).name};
        if (ends == std::set<std::string>{a, b}) return i;
      }
      return cables.size();
    };
    const std::size_t nvlink = cable_named("n0.gpu0", "n0.nvswitch");
    QVERIFY(nvlink < topology.layout_data().cables.size());
    const auto& schedule = window.current()->output.built.schedule;
    OpList all_reduces;
    for (engine::OpId id = 0; id < schedule.ops.size(); ++id)
      if (schedule.ops[id].kind == engine::OpKind::collective && schedule.ops[id].bytes > 0)
        all_reduces.push_back(id);
    QVERIFY(!all_reduces.empty());

    QSignalSpy found(&window.transfer_search(), &LinkTransferSearch::found);
    // A click on the cable's middle selects it (when no other cable is drawn as close).
    const QPointF middle = (topology.position_of(topology.layout_data().cables[nvlink].a) +
                            topology.position_of(topology.layout_data().cables[nvlink].b)) /
                           2;
    QCOMPARE(topology.cable_at(middle), std::optional<std::size_t>(nvlink));
    QTest::mouseClick(&topology, Qt::LeftButton, {}, middle.toPoint());
    QCOMPARE(topology.selected_cable(), std::optional<std::size_t>(nvlink));
    QVERIFY(found.wait(kRunTimeoutMs));
    QCOMPARE(window.timeline_view()->highlighted_ops(), all_reduces);
    QVERIFY2(window.status_text().contains("crossed n0.gpu0 ↔ n0.nvswitch") ||
                 window.status_text().contains("crossed n0.nvswitch ↔ n0.gpu0"),
             qPrintable(window.status_text()));

    topology.select_cable(cable_named("n0.gpu0", "n0.nic0"));
    QVERIFY(found.wait(kRunTimeoutMs));
    QVERIFY(window.timeline_view()->highlighted_ops().empty());
  }

  // Folding: every rank's streams in one row each, then a click on rank 0's label unfolds it.
  void timeline_folds_a_ranks_streams() {
    MainWindow window;
    QVERIFY(open_and_wait(window, QStringLiteral(CLUSTERSIM_TEST_DATA "/ddp-by-hand.yaml")));
    TimelineView& view = *window.timeline_view();
    view.resize(800, 400);
    const std::size_t lanes = view.store().lane_count();
    const std::size_t rank0_lanes = view.store().rank_lanes(0).count;
    QVERIFY(rank0_lanes > 1);
    std::set<engine::Rank> ranks;
    for (std::size_t l = 0; l < lanes; ++l)
      ranks.insert(view.store().lane(l).rank);
    view.fold_all(true);
    QCOMPARE(view.shown_rows().size(), ranks.size());
    QTest::mouseClick(&view, Qt::LeftButton, {}, QPoint(10, view.row_top(0) + 5));
    QVERIFY(!view.folding().folded(0));
    QCOMPARE(view.shown_rows().size(), ranks.size() - 1 + rank0_lanes);
    view.fold_all(false);
    QCOMPARE(view.shown_rows().size(), lanes);
  }

  // A trace the CLI wrote, in either format, opens into the timeline, one item per op of the run
  // with the run's category (its colour); a trace cut short is refused in the status bar with the
  // file and the reason, and the view keeps what it showed.
  void opening_a_trace_fills_the_timeline() {
    QTemporaryDir dir;
    models::RunRequest request;
    request.scenario = (kScenarios + "/resnet50-ddp-dgx-a100.yaml").toStdString();
    const models::Prediction run = models::predict(request);
    const engine::Schedule& s = run.output.built.schedule;

    MainWindow window;
    for (const QString name : {"t.json", "t.pftrace"}) {
      const QString path = dir.filePath(name);
      models::write_trace(run, path.toStdString());
      QVERIFY(open_and_wait(window, path));
      QVERIFY(!window.current());
      QVERIFY(window.presentation() && window.presentation()->trace);
      QCOMPARE(window.presentation()->trace_path, path);
      QCOMPARE(window.timeline_view()->store().item_count(), s.ops.size());
      const engine::Schedule& shown = window.presentation()->schedule();
      QCOMPARE(shown.ops.size(), s.ops.size());
      for (engine::OpId id = 0; id < s.ops.size(); ++id) {
        QCOMPARE(shown.label(shown.ops[id]), s.label(s.ops[id]));
        QCOMPARE(shown.ops[id].category, s.ops[id].category);
      }
      QVERIFY(window.topology_view()->layout_data().cables.empty());
      QVERIFY2(window.status_text().contains(QStringLiteral("a trace of %1 ops").arg(s.ops.size())),
               qPrintable(window.status_text()));
    }

    QSignalSpy failed(&window.runner(), &RunController::failed);
    QFile cut(dir.filePath("cut.json"));
    QVERIFY(cut.open(QIODevice::WriteOnly));
    cut.write(R"({"traceEvents":[{"ph":"X","name":"op")");
    cut.close();
    QVERIFY(window.open_file(cut.fileName()));
    QVERIFY(failed.wait(kRunTimeoutMs));
    QVERIFY2(window.status_text().contains(cut.fileName() + ": not valid JSON"),
             qPrintable(window.status_text()));
    QFile pftrace(dir.filePath("t.pftrace"));
    QVERIFY(pftrace.open(QIODevice::ReadWrite));
    QVERIFY(pftrace.resize(pftrace.size() / 2));
    pftrace.close();
    QVERIFY(window.open_file(pftrace.fileName()));
    QVERIFY(failed.wait(kRunTimeoutMs));
    QVERIFY2(window.status_text().contains(pftrace.fileName() + ": ") &&
                 window.status_text().contains("cut short"),
             qPrintable(window.status_text()));
    // The trace shown before stays.
    QCOMPARE(window.timeline_view()->store().item_count(), s.ops.size());
  }

  // File ▸ Open takes a result JSON into the compare view (A, then B); the run can be pinned
  // beside it, and a JSON that is not a result is refused with its reason.
  void compare_opens_result_json_beside_the_run() {
    MainWindow window;
    QVERIFY(open_and_wait(window, kScenarios + "/llama2-7b-pcie-pp4.yaml"));
    QTemporaryDir dir;
    const QString result = dir.filePath("pp4.json");
    models::write_result_json(*window.current(), result.toStdString(), true);
    QVERIFY(window.open_file(result));
    CompareModel& compare = window.compare_view()->model();
    QVERIFY(compare.a().has_value());
    compare.set_b(result_of(*window.current(), "run"));
    // The same run on both sides: no difference.
    QCOMPARE(compare.text("iteration time", CompareModel::kA),
             compare.text("iteration time", CompareModel::kB));
    QCOMPARE(compare.text("iteration time", CompareModel::kChange), QString("0.0 %"));
    QFile bad(dir.filePath("bad.json"));
    QVERIFY(bad.open(QIODevice::WriteOnly));
    bad.write("[1, 2]");
    bad.close();
    QVERIFY(!window.open_file(bad.fileName()));
    QVERIFY(window.status_text().contains("not a result JSON"));
  }

  // The sweep view sweeps the open scenario with the form's overrides (the hand DDP scenario on
  // the ideal network: 282, 522 and 1002 us for global batches 4, 8, 16), draws one curve of
  // three points, and a point opened from the table becomes the form's override.
  void sweep_view_sweeps_the_open_scenario_and_opens_a_point() {
    MainWindow window;
    QVERIFY(open_and_wait(window, QStringLiteral(CLUSTERSIM_TEST_DATA "/ddp-by-hand.yaml")));
    window.editor()->set_override("simulation.network_model", "ideal");
    SweepView* view = window.sweep_view();
    QSignalSpy finished(&view->controller(), &SweepController::finished);
    QVERIFY(view->run("training.global_batch=4,8,16"));
    QVERIFY(finished.wait(kRunTimeoutMs));
    QCOMPARE(view->series().size(), std::size_t{1});
    QCOMPARE(view->series()[0].points.size(), 3);
    QVERIFY(std::abs(view->series()[0].points[1].y() - 522e-6) < 1e-11);
    QCOMPARE(view->chart_view()->chart()->series().size(), 2);  // the line and its points
    QCOMPARE(view->table_model().rowCount(), 3);
    emit view->open_point(view->table_model().overrides(1));
    QCOMPARE(window.editor()->overrides().value("training.global_batch"), QString("8"));
    // A key without values is refused with the CLI's reason, and nothing starts.
    QVERIFY(!view->run("training.global_batch"));
    QVERIFY2(window.status_text().contains("training.global_batch"),
             qPrintable(window.status_text()));
    window.runner().wait_idle();
  }

  // The presets pickers: choosing GPT-2 XL for the model re-runs with `--set model=gpt2-xl`
  // (another iteration time); choosing "(as in the file)" drops the override again.
  void presets_picker_overrides_the_model_and_gives_it_back() {
    MainWindow window;
    QVERIFY(open_and_wait(window, kScenarios + "/llama2-7b-pcie-pp4.yaml"));
    const double llama = window.current()->output.result.iteration_time_s;
    QComboBox* models = window.editor()->preset_box("model");
    QVERIFY(models != nullptr);
    QCOMPARE(models->currentText(), QString(ScenarioEditor::kAsInFile));
    QVERIFY(models->findText("gpt2-xl") > 0);
    QSignalSpy finished(&window.runner(), &RunController::finished);
    models->setCurrentText("gpt2-xl");
    QCOMPARE(window.editor()->overrides().value("model"), QString("gpt2-xl"));
    QVERIFY(finished.wait(kRunTimeoutMs));
    QCOMPARE(QString::fromStdString(window.current()->scenario.model.name), QString("gpt2-xl"));
    QVERIFY(window.current()->output.result.iteration_time_s != llama);
    models->setCurrentIndex(0);
    QVERIFY(!window.editor()->overrides().contains("model"));
    QVERIFY(finished.wait(kRunTimeoutMs));
    QCOMPARE(window.current()->output.result.iteration_time_s, llama);
    QVERIFY(window.editor()->preset_box("cluster.gpu")->findText("H100-SXM5-80GB") > 0);
  }

  void every_view_exports_png_svg_and_csv() {
    MainWindow window;
    QVERIFY(open_and_wait(window, kScenarios + "/llama2-7b-pcie-pp4.yaml"));
    // The calibration view draws a profile once one is open (File ▸ Open tells it from results).
    QTemporaryDir profiles;
    {
      calibrate::Profile p;
      p.provenance.gpu = "NVIDIA A100-SXM4-80GB";
      p.provenance.backend = "nccl-tests";
      engine::CollectiveFit fit;
      fit.shape = {8, 1};
      fit.bus_factor = 1.75;
      fit.ranges = {{8, 1073741824, 20e-6, 200e9, 0.01}};
      p.collectives = engine::CollectiveProfile({fit});
      calibrate::write_profile(p, profiles.filePath("p.json").toStdString());
    }
    QVERIFY(window.open_file(profiles.filePath("p.json")));
    QCOMPARE(window.calibration_view()->current_curve(), 0);
    QCOMPARE(window.calibration_view()->chart_view()->chart()->series().size(), 2);
    // The sweep view exports its curve and rows once a sweep ran.
    QSignalSpy swept(&window.sweep_view()->controller(), &SweepController::finished);
    QVERIFY(window.sweep_view()->run("parallel.bucket_mb=25,100"));
    QVERIFY(swept.wait(kRunTimeoutMs));
    QTemporaryDir dir;
    QString error;
    QVERIFY2(window.save_screenshots(dir.path(), QSize(800, 500), &error), qPrintable(error));
    for (const auto& [name, view] : window.views()) {
      const QImage shot(dir.filePath(name + ".png"));
      QCOMPARE(shot.size(), QSize(800, 500));
      QVERIFY2(distinct_colors(shot) > 3, qPrintable(name));

      const QString svg = dir.filePath(name + ".svg");
      QVERIFY2(window.export_view(name, svg, &error), qPrintable(error));
      QFile file(svg);
      QVERIFY(file.open(QIODevice::ReadOnly));
      QXmlStreamReader xml(&file);
      int elements = 0;
      while (!xml.atEnd())
        elements += xml.readNext() == QXmlStreamReader::StartElement;
      QVERIFY2(!xml.hasError(), qPrintable(xml.errorString()));
      QVERIFY(elements > 10);
      QVERIFY(QSvgRenderer(svg).isValid());

      const QString csv = dir.filePath(name + ".csv");
      QVERIFY2(window.export_view(name, csv, &error), qPrintable(error));
      QFile csv_file(csv);
      QVERIFY(csv_file.open(QIODevice::ReadOnly));
      QVERIFY(csv_file.readAll().count('\n') >= 2);
    }
    // The timeline's CSV: a header and one line per op.
    QFile ops(dir.filePath("timeline.csv"));
    QVERIFY(ops.open(QIODevice::ReadOnly));
    QCOMPARE(static_cast<std::size_t>(ops.readAll().count('\n')),
             window.current()->output.built.schedule.ops.size() + 1);
  }
};

QTEST_MAIN(GuiWidgetsTest)
#include "test_gui_widgets.moc"
