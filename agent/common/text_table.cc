#include "common/text_table.h"

#include <fmt/format.h>

#include <algorithm>
#include <utility>

namespace gpuq {
namespace {

std::string EscapePipes(const std::string& cell) {
  std::string out;
  for (char c : cell) {
    if (c == '|') out += '\\';
    out += c;
  }
  return out;
}

}  // namespace

TextTable::TextTable(std::vector<std::string> header)
    : header_(std::move(header)) {}

void TextTable::Add(std::vector<std::string> row) {
  rows_.push_back(std::move(row));
}

std::string TextTable::Render() const {
  std::vector<size_t> width;
  auto measure = [&width](const std::vector<std::string>& cells) {
    width.resize(std::max(width.size(), cells.size()), 0);
    for (size_t i = 0; i < cells.size(); ++i) {
      width[i] = std::max(width[i], cells[i].size());
    }
  };
  measure(header_);
  for (const auto& row : rows_) measure(row);
  std::string out;
  auto line = [&out, &width](const std::vector<std::string>& cells) {
    for (size_t i = 0; i < cells.size(); ++i) {
      out += cells[i];
      if (i + 1 < cells.size()) {
        out.append(width[i] - cells[i].size() + 2, ' ');
      }
    }
    out += '\n';
  };
  line(header_);
  for (const auto& row : rows_) line(row);
  return out;
}

std::string TextTable::RenderMarkdown() const {
  std::string out;
  auto line = [&out](const std::vector<std::string>& cells) {
    out += "|";
    for (const std::string& c : cells) out += " " + EscapePipes(c) + " |";
    out += "\n";
  };
  line(header_);
  out += "|";
  for (size_t i = 0; i < header_.size(); ++i) out += "---|";
  out += "\n";
  for (const auto& row : rows_) line(row);
  return out;
}

std::string DashIfEmpty(const std::string& s) { return s.empty() ? "-" : s; }

std::string FormatRate(double per_s) { return fmt::format("{:.1f}", per_s); }

std::string FormatRate(const std::optional<double>& per_s) {
  return per_s ? FormatRate(*per_s) : "-";
}

std::string WrapList(std::string lead, const std::vector<std::string>& items,
                     size_t width) {
  std::string out;
  std::string line = std::move(lead);
  for (size_t i = 0; i < items.size(); ++i) {
    const std::string item = items[i] + (i + 1 < items.size() ? "," : "");
    if (line.size() + 1 + item.size() > width) {
      out += line + "\n";
      line = "  " + item;
    } else {
      line += " " + item;
    }
  }
  return out + line + "\n";
}

}  // namespace gpuq
