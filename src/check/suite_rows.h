// The suites' rows as one document: every row fourfold reads from the suite files, with its parameters, its
// least bytes and flops and its work (docs/records_schema.md, "Suite rows"). Another producer of records reads
// these rather than the suite files: python/fourfold_torch/data/suite_rows.json is this document for the shipped
// suites, written by `fourfold bench ops --list --json` and held fresh by a test.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "check/bench_case.h"

namespace fourfold {

// One row: suite, op, case (the case file that builds it), name, shape, dtype, params, bytes_read,
// bytes_written, bytes_made, flops, work.
nlohmann::ordered_json suite_row_json(const BenchCase& c);

// The document: {"schema", "kind": "suite_rows", "suites": [names], "rows": [rows]}.
nlohmann::ordered_json suite_rows_document(const std::vector<std::string>& suites, nlohmann::ordered_json rows);

// Its text with one row per line, so that a change to a suite reads as the rows it changes.
std::string suite_rows_text(const nlohmann::ordered_json& document);

}  // namespace fourfold
