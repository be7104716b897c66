// The op-time suites: data files (data/suites/<name>.json) listing the shapes each op is timed on, read
// into concrete cases (check/bench_case.h). The file format follows the op named in the file: the row_ops format
// is read here, every other by the case file of the op that names it (check/op_cases/op_case.h, SuiteFormat).
// scripts/make_suites.py writes the shipped files from the model configs they come from, and docs/records.md
// describes each format.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "check/bench_case.h"

namespace fourfold {

// Where the shipped suites are: $FOURFOLD_SUITES_DIR if set; else the first of <executable>/../../data/suites
// (a build tree), <executable>/../share/fourfold/suites (an install) and the source tree's data/suites
// that exists. ValueError naming the places tried when none does.
std::string default_suites_dir();

// Suite names (file names without .json) in `dir`, sorted. ValueError when dir is not a directory.
std::vector<std::string> list_suites(const std::string& dir);

// Loads <dir>/<name>.json. An unknown name is a ValueError that lists the known ones; a bad file is a
// FormatError naming the file and the field (both are usage errors: exit code 2).
Suite load_suite(std::string_view name, const std::string& dir);
Suite load_suite_file(const std::string& path);
// The same from text; `source` names it in messages.
Suite parse_suite(std::string_view text, const std::string& source);

}  // namespace fourfold
