#include "gui/widgets/yaml_highlighter.hpp"

namespace clustersim::gui {

namespace {

QTextCharFormat colored(QRgb color, bool bold = false) {
  QTextCharFormat format;
  format.setForeground(QColor::fromRgb(color));
  if (bold) format.setFontWeight(QFont::Bold);
  return format;
}

}  // namespace

YamlHighlighter::YamlHighlighter(QTextDocument* document) : QSyntaxHighlighter(document) {
  // Later rules win where they overlap: a comment colours everything after its '#'.
  rules_.push_back(
      {QRegularExpression(R"(\b\d+(\.\d+)?([eE][-+]?\d+)?[A-Za-z/]*\b)"), colored(0xff009e73)});
  rules_.push_back({QRegularExpression(R"("[^"]*"|'[^']*')"), colored(0xffcc79a7)});
  rules_.push_back(
      {QRegularExpression(R"(^\s*(- )?[A-Za-z_][\w.-]*(?=\s*:))"), colored(0xff0072b2, true)});
  rules_.push_back({QRegularExpression(R"([{,]\s*[A-Za-z_][\w.-]*(?=\s*:))"), colored(0xff0072b2)});
  rules_.push_back({QRegularExpression(R"((^|\s)#.*$)"), colored(0xff999999)});
}

void YamlHighlighter::highlightBlock(const QString& text) {
  for (const Rule& rule : rules_) {
    auto matches = rule.pattern.globalMatch(text);
    while (matches.hasNext()) {
      const auto match = matches.next();
      setFormat(static_cast<int>(match.capturedStart()), static_cast<int>(match.capturedLength()),
                rule.format);
    }
  }
}

}  // namespace clustersim::gui
