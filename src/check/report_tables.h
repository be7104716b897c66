// The content of a comparison report as titled sections of prose and tables, built once and rendered as
// terminal text, Markdown or HTML, so that the three reports always say the same thing.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "check/compare.h"

namespace fourfold::report {

struct Table {
  std::vector<std::string> header;
  std::vector<bool> numeric;                     // per column: right-aligned
  std::vector<std::vector<std::string>> rows;
  std::vector<bool> flagged;                     // per row: a regression or a slowdown, highlighted
};

// A paragraph (table empty) or a table with an optional caption in `text`.
struct Block {
  std::string text;
  Table table;
  bool is_table() const { return !table.header.empty(); }
};

enum class SectionKind { header, throughput, op_time, correctness, memory };

struct Section {
  SectionKind kind;
  std::string title;
  std::vector<Block> blocks;
};

std::vector<Section> build_sections(const Comparison& c);
std::string verdict_line(const Comparison& c);   // the last line: how many correctness regressions

// Formatting shared by the renderers.
std::string bytes_text(int64_t bytes);            // "1.50 MiB", "-512 B"
std::string change_text(int64_t baseline, int64_t candidate);   // "+1.50 MiB (+12.0%)", "no change"
std::string ratio_text(double r);                 // "1.23x"
std::string psnr_text(double db);                 // "48.20", "inf", "NaN"

}  // namespace fourfold::report
