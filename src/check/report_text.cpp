// The comparison as plain terminal tables: columns padded to their widest cell, numbers right-aligned.
#include <algorithm>

#include <fmt/format.h>

#include "check/compare.h"
#include "check/report_tables.h"

namespace fourfold {
namespace {

// Columns on a terminal: UTF-8 continuation bytes take no column ("µs").
size_t display_width(const std::string& s) {
  return static_cast<size_t>(std::count_if(s.begin(), s.end(), [](char ch) { return (ch & 0xC0) != 0x80; }));
}

std::string pad(const std::string& s, size_t width, bool right) {
  const std::string fill(width - std::min(width, display_width(s)), ' ');
  return right ? fill + s : s + fill;
}

void render_table(std::string& out, const report::Table& t) {
  std::vector<size_t> width(t.header.size(), 0);
  for (size_t i = 0; i < t.header.size(); ++i) width[i] = display_width(t.header[i]);
  for (const auto& row : t.rows)
    for (size_t i = 0; i < row.size() && i < width.size(); ++i) width[i] = std::max(width[i], display_width(row[i]));
  auto line = [&](const std::vector<std::string>& cells, bool flagged) {
    std::string l = flagged ? "! " : "  ";
    for (size_t i = 0; i < cells.size(); ++i) {
      const bool last = i + 1 == cells.size();
      l += last && !t.numeric[i] ? cells[i] : pad(cells[i], width[i], t.numeric[i]);
      if (!last) l += "  ";
    }
    out += l + "\n";
  };
  line(t.header, false);
  std::string rule = "  ";
  for (size_t i = 0; i < width.size(); ++i) rule += std::string(width[i], '-') + (i + 1 < width.size() ? "  " : "");
  out += rule + "\n";
  for (size_t r = 0; r < t.rows.size(); ++r) line(t.rows[r], t.flagged[r]);
  out += "\n";
}

}  // namespace

std::string render_text(const Comparison& c) {
  std::string out;
  for (const report::Section& s : report::build_sections(c)) {
    out += fmt::format("== {} ==\n", s.title);
    for (const report::Block& b : s.blocks) {
      if (!b.text.empty()) out += b.text + "\n";
      if (b.is_table()) render_table(out, b.table);
    }
    if (s.blocks.empty() || !s.blocks.back().is_table()) out += "\n";
  }
  out += report::verdict_line(c) + "\n";
  return out;
}

}  // namespace fourfold
