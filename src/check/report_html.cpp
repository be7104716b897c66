// The comparison as one self-contained HTML page: the same tables, plus charts drawn as inline SVG by hand
// (no scripts, no external references), so the page opens anywhere, offline.
#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "check/compare.h"
#include "check/report_tables.h"

namespace fourfold {
namespace {

constexpr const char* kBaselineColor = "#8a8a8a";
constexpr const char* kCandidateColor = "#3869b0";
constexpr const char* kFasterColor = "#2a7d2a";
constexpr const char* kSlowerColor = "#c0392b";
constexpr const char* kNoiseColor = "#7f7f7f";

std::string escape(const std::string& s) {
  std::string out;
  for (char ch : s) {
    switch (ch) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default: out += ch;
    }
  }
  return out;
}

std::string svg_text(double x, double y, const std::string& text, const char* anchor = "start", int size = 11,
                     const char* color = "#222") {
  return fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" font-size=\"{}\" text-anchor=\"{}\" fill=\"{}\">{}</text>\n", x,
                     y, size, anchor, color, escape(text));
}

std::string svg_line(double x1, double y1, double x2, double y2, const char* color, double width = 1,
                     const char* dash = nullptr) {
  return fmt::format("<line x1=\"{:.1f}\" y1=\"{:.1f}\" x2=\"{:.1f}\" y2=\"{:.1f}\" stroke=\"{}\" stroke-width=\"{}\"{}/>\n",
                     x1, y1, x2, y2, color, width, dash ? fmt::format(" stroke-dasharray=\"{}\"", dash) : "");
}

std::string svg_rect(double x, double y, double w, double h, const char* color, const std::string& title) {
  return fmt::format("<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.1f}\" fill=\"{}\"><title>{}</title></rect>\n",
                     x, y, std::max(w, 0.0), std::max(h, 0.0), color, escape(title));
}

// Room for the longest row label at 11 px sans-serif (about 6.3 px a character), and never less than 300 px.
template <class Rows, class Label>
double label_width(const Rows& rows, Label&& label) {
  size_t longest = 0;
  for (const auto& r : rows) longest = std::max(longest, label(r).size());
  return std::max(300.0, 6.3 * static_cast<double>(longest) + 16.0);
}

std::string svg_open(double width, double height, const std::string& label) {
  return fmt::format("<svg width=\"{:.0f}\" height=\"{:.0f}\" viewBox=\"0 0 {:.0f} {:.0f}\" font-family=\"sans-serif\" "
                     "role=\"img\" aria-label=\"{}\">\n",
                     width, height, width, height, escape(label));
}

std::string legend(double x, double y) {
  return svg_rect(x, y - 9, 10, 10, kBaselineColor, "baseline") + svg_text(x + 14, y, "baseline") +
         svg_rect(x + 80, y - 9, 10, 10, kCandidateColor, "candidate") + svg_text(x + 94, y, "candidate");
}

const char* verdict_color(Verdict v) {
  return v == Verdict::faster ? kFasterColor : v == Verdict::slower ? kSlowerColor : kNoiseColor;
}

// One chart per suite: each shape's speedup as a dot, its spread as an error bar, on a log2 axis around 1.
std::string speedup_chart(const OpTimeComparison& t, const std::string& suite) {
  std::vector<const OpTimeDelta*> rows;
  for (const auto& d : t.rows)
    if (d.suite == suite) rows.push_back(&d);
  if (rows.empty()) return "";
  double lo = 0.8, hi = 1.25;
  for (const auto* d : rows) {
    lo = std::min(lo, d->speedup_low);
    hi = std::max(hi, d->speedup_high);
  }
  const double l2lo = std::floor(std::log2(lo)), l2hi = std::ceil(std::log2(hi));
  const auto row_label = [](const OpTimeDelta* d) { return fmt::format("{} {} {}", d->op, d->shape, d->dtype); };
  const double label_w = label_width(rows, row_label), plot_w = 420, row_h = 20, top = 30,
               width = label_w + plot_w + 40;
  const double height = top + row_h * static_cast<double>(rows.size()) + 40;
  auto x_of = [&](double v) { return label_w + (std::log2(v) - l2lo) / (l2hi - l2lo) * plot_w; };
  std::string svg = svg_open(width, height, "speedup per shape, suite " + suite);
  svg += svg_text(label_w, 16, fmt::format("suite {}: speedup (baseline / candidate), log scale; bars: spread", suite),
                  "start", 12);
  const double bottom = top + row_h * static_cast<double>(rows.size());
  for (double e = l2lo; e <= l2hi; e += 1) {
    const double x = x_of(std::exp2(e));
    svg += svg_line(x, top, x, bottom, "#dddddd");
    svg += svg_text(x, bottom + 14, fmt::format("{:g}x", std::exp2(e)), "middle", 10);
  }
  svg += svg_line(x_of(1.0), top - 4, x_of(1.0), bottom, "#444", 1.2, "4 3");
  for (size_t i = 0; i < rows.size(); ++i) {
    const OpTimeDelta& d = *rows[i];
    const double y = top + row_h * (static_cast<double>(i) + 0.5);
    const char* color = verdict_color(d.verdict);
    svg += svg_text(label_w - 8, y + 4, row_label(&d), "end", 11);
    svg += svg_line(x_of(d.speedup_low), y, x_of(d.speedup_high), y, color, 1.5);
    svg += svg_line(x_of(d.speedup_low), y - 4, x_of(d.speedup_low), y + 4, color, 1.5);
    svg += svg_line(x_of(d.speedup_high), y - 4, x_of(d.speedup_high), y + 4, color, 1.5);
    svg += fmt::format("<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"4\" fill=\"{}\"><title>{}</title></circle>\n",
                       x_of(d.speedup), y, color,
                       escape(fmt::format("{} {} {}: {:.3f}x [{:.3f}, {:.3f}] {}", d.op, d.shape, d.dtype, d.speedup,
                                          d.speedup_low, d.speedup_high, verdict_name(d.verdict))));
  }
  svg += svg_text(label_w, height - 8, "green: faster, red: slower, grey: noise (p10-p90 intervals overlap)", "start", 10);
  return svg + "</svg>\n";
}

// The three levels side by side, baseline and candidate bars in each group; never stacked or summed.
std::string memory_chart(const MemoryComparison& m) {
  std::vector<const MemoryLine*> levels;
  for (const auto& l : m.levels) levels.push_back(&l);
  double top_value = 1;
  for (const auto* l : levels) top_value = std::max({top_value, double(l->baseline), double(l->candidate)});
  const double plot_h = 200, top = 30, left = 20, group_w = 200, bar_w = 60, width = left + group_w * 3 + 20;
  const double base_y = top + plot_h, height = base_y + 60;
  std::string svg = svg_open(width, height, "memory at three levels");
  svg += svg_text(left, 16, "memory peaks at three levels (never summed)", "start", 12);
  svg += svg_line(left, base_y, width - 10, base_y, "#444");
  for (size_t i = 0; i < levels.size(); ++i) {
    const MemoryLine& l = *levels[i];
    const double gx = left + group_w * static_cast<double>(i) + 30;
    const double hb = plot_h * std::max(0.0, double(l.baseline)) / top_value;
    const double hc = plot_h * std::max(0.0, double(l.candidate)) / top_value;
    svg += svg_rect(gx, base_y - hb, bar_w, hb, kBaselineColor, "baseline " + report::bytes_text(l.baseline));
    svg += svg_rect(gx + bar_w + 8, base_y - hc, bar_w, hc, kCandidateColor, "candidate " + report::bytes_text(l.candidate));
    svg += svg_text(gx + bar_w / 2, base_y - hb - 4, report::bytes_text(l.baseline), "middle", 10);
    svg += svg_text(gx + bar_w * 1.5 + 8, base_y - hc - 4, report::bytes_text(l.candidate), "middle", 10);
    svg += svg_text(gx + bar_w + 4, base_y + 16, l.level, "middle", 11);
  }
  svg += legend(left, height - 12);
  return svg + "</svg>\n";
}

// PSNR per op row, baseline and candidate bars; exact (infinite PSNR) drawn full length and labelled.
std::string psnr_chart(const CorrectnessComparison& t) {
  if (t.ops.empty()) return "";
  double top_value = 1;
  for (const auto& d : t.ops)
    for (double v : {d.baseline.psnr_db, d.candidate.psnr_db})
      if (std::isfinite(v)) top_value = std::max(top_value, v);
  top_value *= 1.1;
  const auto row_label = [](const CorrectnessDelta& d) { return fmt::format("{} {} {}", d.op, d.shape, d.dtype); };
  const double label_w = label_width(t.ops, row_label), plot_w = 380, row_h = 30, top = 30,
               width = label_w + plot_w + 90;
  const double height = top + row_h * static_cast<double>(t.ops.size()) + 30;
  auto length = [&](double v) { return std::isinf(v) && v > 0 ? plot_w : std::isfinite(v) ? plot_w * std::max(0.0, v) / top_value : 0.0; };
  std::string svg = svg_open(width, height, "PSNR per op");
  svg += svg_text(label_w, 16, "PSNR per op against the float64 reference (dB; longer is better)", "start", 12);
  for (size_t i = 0; i < t.ops.size(); ++i) {
    const CorrectnessDelta& d = t.ops[i];
    const double y = top + row_h * static_cast<double>(i);
    svg += svg_text(label_w - 8, y + 17, row_label(d), "end", 11,
                    d.regressions.empty() ? "#222" : kSlowerColor);
    const double lb = length(d.baseline.psnr_db), lc = length(d.candidate.psnr_db);
    svg += svg_rect(label_w, y + 3, lb, 11, kBaselineColor, "baseline " + report::psnr_text(d.baseline.psnr_db));
    svg += svg_rect(label_w, y + 15, lc, 11, kCandidateColor, "candidate " + report::psnr_text(d.candidate.psnr_db));
    svg += svg_text(label_w + lb + 4, y + 12, report::psnr_text(d.baseline.psnr_db), "start", 9);
    svg += svg_text(label_w + lc + 4, y + 24, report::psnr_text(d.candidate.psnr_db), "start", 9);
  }
  svg += legend(label_w, height - 8);
  return svg + "</svg>\n";
}

void render_table(std::string& out, const report::Table& t) {
  out += "<table>\n<thead><tr>";
  for (size_t i = 0; i < t.header.size(); ++i)
    out += fmt::format("<th{}>{}</th>", t.numeric[i] ? " class=\"num\"" : "", escape(t.header[i]));
  out += "</tr></thead>\n<tbody>\n";
  for (size_t r = 0; r < t.rows.size(); ++r) {
    out += t.flagged[r] ? "<tr class=\"flag\">" : "<tr>";
    for (size_t i = 0; i < t.rows[r].size(); ++i)
      out += fmt::format("<td{}>{}</td>", i < t.numeric.size() && t.numeric[i] ? " class=\"num\"" : "",
                         escape(t.rows[r][i]));
    out += "</tr>\n";
  }
  out += "</tbody>\n</table>\n";
}

constexpr const char* kStyle = R"(body { font-family: sans-serif; margin: 2em; color: #222; }
table { border-collapse: collapse; margin: 0.5em 0 1.5em; font-size: 13px; }
th, td { border: 1px solid #ccc; padding: 3px 8px; text-align: left; }
th { background: #f2f2f2; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
tr.flag td { background: #fbe3e0; }
svg { display: block; margin: 0.5em 0 1.5em; }
p.verdict { font-weight: bold; })";

}  // namespace

std::string render_html(const Comparison& c) {
  std::string out = fmt::format(
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>fourfold compare: {}</title>\n"
      "<style>\n{}\n</style>\n</head>\n<body>\n",
      escape(c.baseline_manifest.workload.name), kStyle);
  bool first = true;
  // The memory sections in build_sections' order: the pad workload's, the model's, the VAE's.
  std::vector<const MemoryComparison*> memories;
  for (const auto* m : {&c.memory, &c.model_memory, &c.vae_memory})
    if (*m) memories.push_back(&**m);
  size_t memory_sections = 0;
  for (const report::Section& s : report::build_sections(c)) {
    out += fmt::format("<{0}>{1}</{0}>\n", first ? "h1" : "h2", escape(s.title));
    first = false;
    for (const report::Block& b : s.blocks) {
      if (!b.text.empty()) out += "<p>" + escape(b.text) + "</p>\n";
      if (b.is_table()) render_table(out, b.table);
    }
    if (s.kind == report::SectionKind::op_time && c.op_time)
      for (const SuiteSummary& g : c.op_time->suites) out += speedup_chart(*c.op_time, g.suite);
    if (s.kind == report::SectionKind::correctness && c.correctness) out += psnr_chart(*c.correctness);
    if (s.kind == report::SectionKind::memory) {
      if (memory_sections < memories.size()) out += memory_chart(*memories[memory_sections++]);
    }
  }
  out += "<p class=\"verdict\">" + escape(report::verdict_line(c)) + "</p>\n</body>\n</html>\n";
  return out;
}

}  // namespace fourfold
