// Plain-text tables for the terminal output of axon commands: a header row, then one row per item, columns
// two spaces apart and padded to their widest cell.
//
// Thread safety: none. Allocates.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace axon::tools {

enum class Align { kLeft, kRight };

class TextTable {
 public:
  /// The column headers; every row has as many cells.
  explicit TextTable(std::vector<std::string> header);

  /// Right-aligns (numbers) or left-aligns (the default) column `column`.
  void set_align(std::size_t column, Align align);
  /// Adds a row with one cell per column (an assert checks the count).
  void add_row(std::vector<std::string> cells);
  [[nodiscard]] std::size_t rows() const noexcept { return rows_.size(); }

  /// The table, one line per row, each ending in '\n'. Widths count UTF-8 characters, not bytes; a left-aligned
  /// last column is not padded, so lines carry no trailing spaces.
  [[nodiscard]] std::string render() const;

 private:
  std::vector<std::string> header_;
  std::vector<Align> align_;
  std::vector<std::vector<std::string>> rows_;
};

/// The number of characters of UTF-8 `text` (bytes that do not continue a character).
[[nodiscard]] std::size_t display_width(const std::string& text) noexcept;

}  // namespace axon::tools
