// Rows of cells under a header, as aligned columns or a GitHub markdown
// table: --once's tables and report's text and markdown sections.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace gpuq {

class TextTable {
 public:
  explicit TextTable(std::vector<std::string> header);
  void Add(std::vector<std::string> row);
  /// No row below the header.
  bool empty() const { return rows_.empty(); }
  /// Columns as wide as their widest cell, two spaces apart; the last
  /// column unpadded. A row may have fewer or more cells than the header.
  std::string Render() const;
  /// "| a | b |" lines, the header's underline after the first; a '|' in a
  /// cell is escaped.
  std::string RenderMarkdown() const;

 private:
  std::vector<std::string> header_;
  std::vector<std::vector<std::string>> rows_;
};

// The cells --once, top and report share (their tables and the HTML
// report's).
/// `s`, or "-" when it is empty.
std::string DashIfEmpty(const std::string& s);
/// A rate: one decimal ("12.5").
std::string FormatRate(double per_s);
/// A rate, "-" when there is none.
std::string FormatRate(const std::optional<double>& per_s);

/// `items` after `lead`, ", " apart, in lines of at most `width` columns;
/// a line after the first starts with two spaces (an item longer than a
/// line gets one of its own). Ends with a newline.
std::string WrapList(std::string lead, const std::vector<std::string>& items,
                     size_t width);

}  // namespace gpuq
