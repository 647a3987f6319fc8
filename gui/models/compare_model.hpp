// Two results side by side (issue 12 "Compare"): the headline figures of result A and result B,
// B − A and the change in per cent. A result is the JSON `clustersim run --json` writes, read
// from a file, or the current run's, pinned when the user asks; so two plans (run one, pin it,
// edit, run the other) or a prediction and a measurement's result compare alike.
#pragma once

#include <QAbstractTableModel>
#include <QString>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>

#include "gui/models/presentation.hpp"

namespace clustersim::gui {

// One side: the result JSON and where it came from ("run of llama2-7b.yaml", a file's name).
struct ComparedResult {
  QString origin;
  nlohmann::json json;
};

// A result JSON file that cannot be compared: the message names the file and, where one is
// missing or of the wrong type, the key ("iteration_time_s").
class ResultFileError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Reads and checks a result JSON file (the keys of docs/outputs.md the comparison shows).
ComparedResult read_result_file(const QString& path);
// The current run's result, as --json would write it.
ComparedResult result_of(const models::Prediction& prediction, const QString& origin);

class CompareModel : public QAbstractTableModel {
  Q_OBJECT

 public:
  enum Column { kA, kB, kDifference, kChange, kColumns };

  using QAbstractTableModel::QAbstractTableModel;
  void set_a(std::optional<ComparedResult> a);
  void set_b(std::optional<ComparedResult> b);
  const std::optional<ComparedResult>& a() const { return a_; }
  const std::optional<ComparedResult>& b() const { return b_; }

  // The text of figure `figure` ("iteration time") in `column`, empty when there is none.
  QString text(const QString& figure, Column column) const;

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role) const override;
  QVariant headerData(int section, Qt::Orientation orientation, int role) const override;

 private:
  QString cell(int row, Column column) const;

  std::optional<ComparedResult> a_, b_;
};

}  // namespace clustersim::gui
