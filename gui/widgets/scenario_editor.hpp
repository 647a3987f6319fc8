// The scenario as YAML text (coloured) beside a form of the plan's main keys. The text is what
// runs; a form field the user changes becomes a --set override on top of it (shown under the
// form), so the file's comments and layout are never rewritten. Errors show inline with the
// CLI's exact message, and the line it names is marked in the text.
#pragma once

#include <QLabel>
#include <QMap>
#include <QPlainTextEdit>
#include <QWidget>

#include "gui/models/run_controller.hpp"

class QComboBox;
class QSpinBox;
class QDoubleSpinBox;

namespace clustersim::gui {

class ScenarioEditor : public QWidget {
  Q_OBJECT

 public:
  explicit ScenarioEditor(QWidget* parent = nullptr);

  // Shows a file's text; the form's overrides are cleared.
  void set_document(const QString& path, const QString& text);
  QString path() const { return path_; }
  QString text() const { return text_edit_->toPlainText(); }
  // What to run: the path, the text as edited and the form's overrides.
  RunInput input() const;
  // The form shows what a run used (the loaded scenario), without turning it into overrides.
  void show_scenario(const models::Scenario& scenario);
  // Sets one form key as if the user had edited it ("parallel.tp", "4"; "model", "llama2-7b").
  void set_override(const QString& key, const QString& value);
  // The presets pickers ("model", "cluster.node", "cluster.gpu"): their first entry,
  // kAsInFile, keeps what the scenario says (no override).
  static constexpr const char* kAsInFile = "(as in the file)";
  QComboBox* preset_box(const QString& key) const { return preset_boxes_.value(key); }
  QMap<QString, QString> overrides() const { return overrides_; }
  void show_error(const QString& message);
  void clear_error();
  QString error_text() const { return error_->text(); }
  QPlainTextEdit* text_edit() const { return text_edit_; }

 signals:
  // The text or the form changed: the scenario should run again.
  void edited();

 private:
  QWidget* build_form();
  void form_changed(const QString& key, const QString& value);
  void refresh_overrides_label();

  QString path_;
  QPlainTextEdit* text_edit_;
  QLabel* error_;
  QLabel* overrides_label_;
  QMap<QString, QString> overrides_;
  QMap<QString, QSpinBox*> spin_boxes_;
  QMap<QString, QComboBox*> combo_boxes_;
  QMap<QString, QComboBox*> preset_boxes_;
  QDoubleSpinBox* bucket_mb_ = nullptr;
  bool populating_ = false;
};

}  // namespace clustersim::gui
