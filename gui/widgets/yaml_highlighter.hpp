// Colours a scenario's YAML as the user types: keys, comments, numbers with units, strings. Only
// colouring: the scenario loader remains the one parser.
#pragma once

#include <QRegularExpression>
#include <QSyntaxHighlighter>

namespace clustersim::gui {

class YamlHighlighter : public QSyntaxHighlighter {
  Q_OBJECT

 public:
  explicit YamlHighlighter(QTextDocument* document);

 protected:
  void highlightBlock(const QString& text) override;

 private:
  struct Rule {
    QRegularExpression pattern;
    QTextCharFormat format;
  };
  std::vector<Rule> rules_;
};

}  // namespace clustersim::gui
