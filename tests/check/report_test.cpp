// The reports: terminal and Markdown tables, and a self-contained HTML page with inline SVG charts.
#include <gtest/gtest.h>

#include "check/compare.h"
#include "check/sample_records.h"

namespace fourfold {
namespace {

Comparison sample_comparison() {
  RecordSet base = testing::sample_record_set("generic"), cand = testing::sample_record_set("");
  cand.op_time->rows[0] = testing::op_row("decode", "linear", "1x4096", 45, 50, 55);
  cand.correctness->ops[0].psnr_db = 50.0;   // a regression, to be highlighted
  cand.memory->process_peak_bytes = 20 << 20;
  return compare_records(base, cand);
}

size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

TEST(Report, HtmlIsSelfContainedWithCharts) {
  Comparison c = sample_comparison();
  c.baseline_manifest.workload.name = "<script>alert(1)</script>";
  const std::string html = render_html(c);
  EXPECT_EQ(html.rfind("<!DOCTYPE html>", 0), 0u);
  EXPECT_NE(html.find("</html>"), std::string::npos);
  EXPECT_EQ(html.find("http://"), std::string::npos);
  EXPECT_EQ(html.find("https://"), std::string::npos);
  EXPECT_EQ(html.find("<script"), std::string::npos);   // names are escaped, nothing runs
  EXPECT_NE(html.find("&lt;script&gt;"), std::string::npos);
  // Charts: one speedup chart per suite (decode, prefill), PSNR per op, memory levels of the op-level memory
  // workload and of the end-to-end decode (model_memory).
  EXPECT_EQ(count(html, "<svg"), 5u);
  EXPECT_EQ(count(html, "<svg"), count(html, "</svg>"));
  EXPECT_NE(html.find("aria-label=\"speedup per shape, suite decode\""), std::string::npos);
  EXPECT_NE(html.find("aria-label=\"PSNR per op\""), std::string::npos);
  EXPECT_NE(html.find("aria-label=\"memory at three levels\""), std::string::npos);
  EXPECT_EQ(count(html, "<table>"), count(html, "</table>"));
  EXPECT_EQ(count(html, "<tr"), count(html, "</tr>"));
  EXPECT_NE(html.find("class=\"flag\""), std::string::npos);
}

TEST(Report, MarkdownHasTheTables) {
  const std::string md = render_markdown(sample_comparison());
  EXPECT_EQ(md.rfind("# fourfold compare", 0), 0u);
  EXPECT_NE(md.find("## Op time"), std::string::npos);
  EXPECT_NE(md.find("| suite | op | shape | dtype | tier |"), std::string::npos);
  EXPECT_NE(md.find("|---|---|---|---|---|---:|"), std::string::npos);
  EXPECT_NE(md.find("| level | baseline | candidate | change |"), std::string::npos);
  EXPECT_NE(md.find("| outside the allocator |"), std::string::npos);
  EXPECT_NE(md.find("**REGRESSION"), std::string::npos);
  EXPECT_NE(md.find("| end to end |"), std::string::npos);
  EXPECT_NE(md.find("| phase | context |"), std::string::npos);
  EXPECT_NE(md.find("## Memory of the end-to-end decode"), std::string::npos);
}

TEST(Report, TerminalTables) {
  const std::string text = render_text(sample_comparison());
  EXPECT_NE(text.find("== Op time"), std::string::npos);
  EXPECT_NE(text.find("faster"), std::string::npos);
  EXPECT_NE(text.find("noise"), std::string::npos);
  EXPECT_NE(text.find("outside the allocator"), std::string::npos);
  EXPECT_NE(text.find("2.000x"), std::string::npos);   // 100 µs -> 50 µs
  EXPECT_NE(text.find("correctness: 1 row(s) regressed"), std::string::npos);
  EXPECT_NE(text.find("policy"), std::string::npos);   // the differing policy is printed
}

}  // namespace
}  // namespace fourfold
