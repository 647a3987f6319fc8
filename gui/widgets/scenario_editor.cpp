#include "gui/widgets/scenario_editor.hpp"

#include <QComboBox>
#include <QDoubleSpinBox>
#include <QFileInfo>
#include <QFormLayout>
#include <QPushButton>
#include <QRegularExpression>
#include <QSpinBox>
#include <QSplitter>
#include <QVBoxLayout>

#include "engine/network/network_model.hpp"
#include "gui/widgets/yaml_highlighter.hpp"
#include "models/hardware.hpp"
#include "models/model_spec.hpp"
#include "models/scenario.hpp"

namespace clustersim::gui {

namespace {

template <typename Table>
QStringList names_of(const Table& table) {
  QStringList out;
  for (const std::string& n : table.names())
    out << QString::fromStdString(n);
  return out;
}

QString qstring(std::string_view text) {
  return QString::fromUtf8(text.data(), static_cast<qsizetype>(text.size()));
}

}  // namespace

ScenarioEditor::ScenarioEditor(QWidget* parent)
    : QWidget(parent),
      text_edit_(new QPlainTextEdit(this)),
      error_(new QLabel(this)),
      overrides_label_(new QLabel(this)) {
  QFont mono(QStringLiteral("monospace"));
  mono.setStyleHint(QFont::TypeWriter);
  text_edit_->setFont(mono);
  text_edit_->setLineWrapMode(QPlainTextEdit::NoWrap);
  new YamlHighlighter(text_edit_->document());
  error_->setWordWrap(true);
  error_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  error_->setStyleSheet(QStringLiteral("color: #d7191c;"));
  error_->setObjectName(QStringLiteral("error"));
  error_->hide();
  overrides_label_->setWordWrap(true);

  auto* splitter = new QSplitter(Qt::Vertical, this);
  splitter->addWidget(build_form());
  splitter->addWidget(text_edit_);
  splitter->setStretchFactor(1, 1);
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addWidget(splitter, 1);
  layout->addWidget(error_);
  connect(text_edit_, &QPlainTextEdit::textChanged, this, [this] {
    if (!populating_) emit edited();
  });
}

QWidget* ScenarioEditor::build_form() {
  auto* form_widget = new QWidget(this);
  auto* form = new QFormLayout(form_widget);
  auto add_spin = [&](const QString& key, int maximum) {
    auto* box = new QSpinBox(form_widget);
    box->setRange(1, maximum);
    spin_boxes_[key] = box;
    form->addRow(key, box);
    connect(box, &QSpinBox::valueChanged, this,
            [this, key](int value) { form_changed(key, QString::number(value)); });
  };
  auto add_combo = [&](const QString& key, const QStringList& choices) {
    auto* box = new QComboBox(form_widget);
    box->addItems(choices);
    combo_boxes_[key] = box;
    form->addRow(key, box);
    connect(box, &QComboBox::currentTextChanged, this,
            [this, key](const QString& value) { form_changed(key, value); });
  };
  // Presets pickers (`clustersim presets`): a preset replaces what the file says for that key.
  auto add_preset = [&](const QString& key, const std::vector<std::string>& names) {
    auto* box = new QComboBox(form_widget);
    box->addItem(QString::fromLatin1(kAsInFile));
    for (const std::string& n : names)
      box->addItem(QString::fromStdString(n));
    preset_boxes_[key] = box;
    form->addRow(key, box);
    connect(box, &QComboBox::currentTextChanged, this, [this, key](const QString& value) {
      if (value != QLatin1String(kAsInFile)) {
        form_changed(key, value);
      } else if (!populating_ && overrides_.remove(key) > 0) {
        refresh_overrides_label();
        emit edited();
      }
    });
  };
  add_preset(QStringLiteral("model"), models::model_names());
  add_preset(QStringLiteral("cluster.node"), models::node_names());
  add_preset(QStringLiteral("cluster.gpu"), models::gpu_names());
  add_spin(QStringLiteral("cluster.nodes"), 65536);
  add_spin(QStringLiteral("parallel.tp"), 1024);
  add_spin(QStringLiteral("parallel.pp"), 1024);
  add_spin(QStringLiteral("parallel.ep"), 1024);
  add_spin(QStringLiteral("training.micro_batch"), 65536);
  add_combo(QStringLiteral("parallel.data_parallel"), names_of(models::kDataParallelNames));
  add_combo(QStringLiteral("parallel.schedule"), names_of(models::kPipelineScheduleNames));
  add_combo(QStringLiteral("training.recompute"), names_of(models::kRecomputeNames));
  QStringList networks;
  for (const std::string& n : engine::network_model_names())
    networks << QString::fromStdString(n);
  add_combo(QStringLiteral("simulation.network_model"), networks);
  bucket_mb_ = new QDoubleSpinBox(form_widget);
  bucket_mb_->setRange(0.001, 1e6);
  bucket_mb_->setDecimals(3);
  bucket_mb_->setSuffix(QStringLiteral(" MiB"));
  form->addRow(QStringLiteral("parallel.bucket_mb"), bucket_mb_);
  connect(bucket_mb_, &QDoubleSpinBox::valueChanged, this, [this](double value) {
    form_changed(QStringLiteral("parallel.bucket_mb"), QString::number(value, 'g', 10));
  });
  auto* reset = new QPushButton(tr("Clear overrides"), form_widget);
  connect(reset, &QPushButton::clicked, this, [this] {
    overrides_.clear();
    refresh_overrides_label();
    emit edited();
  });
  form->addRow(overrides_label_);
  form->addRow(reset);
  return form_widget;
}

void ScenarioEditor::set_document(const QString& path, const QString& text) {
  populating_ = true;
  path_ = path;
  text_edit_->setPlainText(text);
  for (QComboBox* box : preset_boxes_)
    box->setCurrentIndex(0);  // a new file: its own model and cluster
  overrides_.clear();
  refresh_overrides_label();
  clear_error();
  populating_ = false;
}

RunInput ScenarioEditor::input() const {
  RunInput in{path_, text_edit_->toPlainText(), {}};
  for (auto it = overrides_.begin(); it != overrides_.end(); ++it)
    in.overrides << it.key() + '=' + it.value();
  return in;
}

void ScenarioEditor::show_scenario(const models::Scenario& scenario) {
  populating_ = true;
  const QMap<QString, int> numbers{{"cluster.nodes", scenario.cluster.nodes},
                                   {"parallel.tp", scenario.parallel.tp},
                                   {"parallel.pp", scenario.parallel.pp},
                                   {"parallel.ep", scenario.parallel.ep},
                                   {"training.micro_batch", scenario.training.micro_batch}};
  for (auto it = numbers.begin(); it != numbers.end(); ++it)
    spin_boxes_[it.key()]->setValue(it.value());
  const QMap<QString, QString> choices{
      {"parallel.data_parallel",
       qstring(models::kDataParallelNames.name(scenario.parallel.data_parallel))},
      {"parallel.schedule",
       qstring(models::kPipelineScheduleNames.name(scenario.parallel.schedule))},
      {"training.recompute", qstring(models::kRecomputeNames.name(scenario.training.recompute))},
      {"simulation.network_model", QString::fromStdString(scenario.simulation.network_model)}};
  for (auto it = choices.begin(); it != choices.end(); ++it)
    combo_boxes_[it.key()]->setCurrentText(it.value());
  bucket_mb_->setValue(scenario.parallel.bucket_bytes / (1024.0 * 1024.0));
  populating_ = false;
}

void ScenarioEditor::set_override(const QString& key, const QString& value) {
  if (auto* spin = spin_boxes_.value(key)) {
    spin->setValue(value.toInt());
  } else if (auto* combo = combo_boxes_.value(key)) {
    combo->setCurrentText(value);
  } else if (auto* preset = preset_boxes_.value(key)) {
    preset->setCurrentText(value);
  }
  form_changed(key, value);  // also when the box already showed it, or it has no box
}

void ScenarioEditor::form_changed(const QString& key, const QString& value) {
  if (populating_) return;
  if (overrides_.value(key) == value) return;
  overrides_[key] = value;
  refresh_overrides_label();
  emit edited();
}

void ScenarioEditor::refresh_overrides_label() {
  QStringList flags;
  for (auto it = overrides_.begin(); it != overrides_.end(); ++it)
    flags << QStringLiteral("--set %1=%2").arg(it.key(), it.value());
  overrides_label_->setText(flags.isEmpty() ? tr("no overrides") : flags.join('\n'));
}

void ScenarioEditor::show_error(const QString& message) {
  error_->setText(message);
  error_->show();
  // "error: FILE:LINE:COLUMN: ..." marks that line when FILE is the one shown.
  static const QRegularExpression located(QStringLiteral(R"(^error: (.+?):(\d+):(\d+): )"));
  QList<QTextEdit::ExtraSelection> marks;
  const auto match = located.match(message);
  if (match.hasMatch() &&
      QFileInfo(match.captured(1)).absoluteFilePath() == QFileInfo(path_).absoluteFilePath()) {
    const int line = match.captured(2).toInt();
    QTextEdit::ExtraSelection mark;
    mark.cursor = QTextCursor(text_edit_->document()->findBlockByLineNumber(line - 1));
    mark.format.setBackground(QColor(0xff, 0xd0, 0xd0));
    mark.format.setProperty(QTextFormat::FullWidthSelection, true);
    marks << mark;
  }
  text_edit_->setExtraSelections(marks);
}

void ScenarioEditor::clear_error() {
  error_->clear();
  error_->hide();
  text_edit_->setExtraSelections({});
}

}  // namespace clustersim::gui
