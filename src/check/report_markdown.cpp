// The comparison as Markdown: one heading per record, GitHub-style tables.
#include <fmt/format.h>

#include "check/compare.h"
#include "check/report_tables.h"

namespace fourfold {
namespace {

// A cell must not end the row early or start a new one.
std::string cell(const std::string& s) {
  std::string out;
  for (char ch : s) {
    if (ch == '|') out += "\\|";
    else if (ch == '\n') out += ' ';
    else out += ch;
  }
  return out;
}

void render_table(std::string& out, const report::Table& t) {
  out += "|";
  for (const auto& h : t.header) out += fmt::format(" {} |", cell(h));
  out += "\n|";
  for (size_t i = 0; i < t.header.size(); ++i) out += t.numeric[i] ? "---:|" : "---|";
  out += "\n";
  for (size_t r = 0; r < t.rows.size(); ++r) {
    out += "|";
    for (const auto& v : t.rows[r])
      out += t.flagged[r] && !v.empty() ? fmt::format(" **{}** |", cell(v)) : fmt::format(" {} |", cell(v));
    out += "\n";
  }
  out += "\n";
}

}  // namespace

std::string render_markdown(const Comparison& c) {
  std::string out;
  bool first = true;
  for (const report::Section& s : report::build_sections(c)) {
    out += fmt::format("{} {}\n\n", first ? "#" : "##", s.title);
    first = false;
    for (const report::Block& b : s.blocks) {
      if (!b.text.empty()) out += cell(b.text) + "\n\n";
      if (b.is_table()) render_table(out, b.table);
    }
  }
  out += fmt::format("**{}**\n", report::verdict_line(c));
  return out;
}

}  // namespace fourfold
