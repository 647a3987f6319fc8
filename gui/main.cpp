// clustersim-gui [FILE] | clustersim-gui --screenshot DIR FILE
#include <QApplication>
#include <QCommandLineParser>
#include <QSize>
#include <cstdio>

#include "gui/models/presentation.hpp"
#include "gui/models/run_controller.hpp"
#include "gui/widgets/main_window.hpp"
#include "models/frontend.hpp"

namespace {

constexpr QSize kScreenshotSize{1600, 900};

// Renders every view of FILE (a scenario, run first, or a trace, read) to DIR/<view>.png, no
// display needed. Exit codes as the CLI's: 2 for bad input, 1 for anything else.
int screenshot(clustersim::gui::MainWindow& window, const QString& directory, const QString& file) {
  QString error;
  clustersim::gui::PresentationPtr presentation;
  if (clustersim::models::is_trace_path(file.toStdString())) {
    bool cancelled = false;
    presentation = clustersim::gui::read_trace_presentation(file, nullptr, {}, &error, &cancelled);
  } else if (const auto prediction =
                 clustersim::gui::run_prediction({file, {}, {}}, nullptr, {}, &error, nullptr)) {
    presentation = clustersim::gui::present(prediction);
  }
  if (!presentation) {
    std::fprintf(stderr, "%s\n", qPrintable(error));
    return 2;
  }
  window.show_presentation(presentation);
  if (!window.save_screenshots(directory, kScreenshotSize, &error)) {
    std::fprintf(stderr, "error: %s\n", qPrintable(error));
    return 1;
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  // Screenshots need no display: pick the offscreen platform unless one was chosen.
  for (int i = 1; i < argc; ++i)
    if (QByteArray(argv[i]) == "--screenshot" && qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM"))
      qputenv("QT_QPA_PLATFORM", "offscreen");
  QApplication app(argc, argv);
  QApplication::setOrganizationName(QStringLiteral("clustersim"));
  QApplication::setApplicationName(QStringLiteral("clustersim-gui"));
  QApplication::setApplicationVersion(QStringLiteral(CLUSTERSIM_VERSION));

  QCommandLineParser parser;
  parser.setApplicationDescription(QStringLiteral("clustersim's desktop dashboard"));
  parser.addHelpOption();
  parser.addVersionOption();
  const QCommandLineOption screenshot_option(
      QStringLiteral("screenshot"), QStringLiteral("Render every view of FILE to DIR/<view>.png."),
      QStringLiteral("DIR"));
  parser.addOption(screenshot_option);
  parser.addPositionalArgument(QStringLiteral("FILE"),
                               QStringLiteral("A scenario to open and run, or a trace it wrote "
                                              "(clustersim run --trace t.json), a result JSON or "
                                              "a calibration profile."),
                               QStringLiteral("[FILE]"));
  parser.process(app);
  const QStringList files = parser.positionalArguments();

  clustersim::gui::MainWindow window;
  if (parser.isSet(screenshot_option)) {
    if (files.size() != 1) {
      std::fprintf(stderr, "error: --screenshot DIR needs one FILE (a scenario or a trace)\n");
      return 2;
    }
    return screenshot(window, parser.value(screenshot_option), files.first());
  }
  window.resize(1400, 850);
  window.show();
  if (!files.isEmpty()) window.open_file(files.first());
  return QApplication::exec();
}
