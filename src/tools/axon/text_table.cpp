#include "src/tools/axon/text_table.hpp"

#include <algorithm>
#include <cassert>
#include <utility>

namespace axon::tools {

std::size_t display_width(const std::string& text) noexcept {
  // UTF-8 continuation bytes are 10xxxxxx.
  return static_cast<std::size_t>(
      std::count_if(text.begin(), text.end(), [](char c) { return (static_cast<unsigned char>(c) & 0xC0U) != 0x80U; }));
}

TextTable::TextTable(std::vector<std::string> header)
    : header_(std::move(header)), align_(header_.size(), Align::kLeft) {}

void TextTable::set_align(std::size_t column, Align align) {
  assert(column < align_.size() && "TextTable::set_align: no such column");
  align_[column] = align;
}

void TextTable::add_row(std::vector<std::string> cells) {
  assert(cells.size() == header_.size() && "TextTable::add_row: one cell per column");
  rows_.push_back(std::move(cells));
}

std::string TextTable::render() const {
  std::vector<std::size_t> widths(header_.size(), 0);
  auto measure = [&widths](const std::vector<std::string>& row) {
    for (std::size_t i = 0; i < row.size(); ++i) {
      widths[i] = std::max(widths[i], display_width(row[i]));
    }
  };
  measure(header_);
  for (const auto& row : rows_) {
    measure(row);
  }
  std::string out;
  auto print = [&](const std::vector<std::string>& row) {
    for (std::size_t i = 0; i < row.size(); ++i) {
      const std::size_t pad = widths[i] - display_width(row[i]);
      const bool last = i + 1 == row.size();
      if (i > 0) {
        out += "  ";
      }
      if (align_[i] == Align::kRight) {
        out.append(pad, ' ');
        out += row[i];
      } else {
        out += row[i];
        if (!last) {
          out.append(pad, ' ');
        }
      }
    }
    // Empty cells at the end of a row leave padding behind: no line ends in spaces.
    out.erase(out.find_last_not_of(' ') + 1);
    out += '\n';
  };
  print(header_);
  for (const auto& row : rows_) {
    print(row);
  }
  return out;
}

}  // namespace axon::tools
