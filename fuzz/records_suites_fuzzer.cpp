// libFuzzer target: arbitrary bytes into the records readers (record sets and check results) and the suite
// reader. They may only answer with fourfold's own errors; anything else fails the run. Built by scripts/fuzz.sh.
#include <cstdint>
#include <string_view>

#include "check/records.h"
#include "check/suites.h"
#include "fourfold/errors.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    fourfold::parse_record_set(text, "fuzz.json");
  } catch (const fourfold::Error&) {
  }
  try {
    fourfold::parse_check_result(text, "fuzz.json");
  } catch (const fourfold::Error&) {
  }
  try {
    fourfold::parse_suite(text, "fuzz.json");
  } catch (const fourfold::Error&) {
  }
  return 0;
}
