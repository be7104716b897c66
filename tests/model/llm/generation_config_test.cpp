// generation_config.json's sampling values are checked where the file and the field can be named: a top_p of 5
// is the file's error, not the sampler's.
#include <string>

#include <gtest/gtest.h>

#include "fourfold/errors.h"
#include "model/llm/generation_config.h"

namespace fourfold::model {
namespace {

std::string format_error(const std::string& json) {
  try {
    parse_generation_config(json, "m/generation_config.json");
  } catch (const FormatError& e) {
    return e.what();
  }
  return "";
}

TEST(GenerationConfig, SamplingValuesOutOfRangeNameTheFileAndTheField) {
  for (const auto& [json, field] : {std::pair<std::string, std::string>{R"({"top_p": 5})", "top_p"},
                                    {R"({"top_p": 0})", "top_p"},
                                    {R"({"top_p": -0.5})", "top_p"},
                                    {R"({"temperature": -1})", "temperature"},
                                    {R"({"top_k": -3})", "top_k"},
                                    {R"({"max_new_tokens": -1})", "max_new_tokens"},
                                    {R"({"top_p": "0.9"})", "top_p"}}) {
    const std::string m = format_error(json);
    EXPECT_NE(m.find("m/generation_config.json"), std::string::npos) << json << ": " << m;
    EXPECT_NE(m.find("'" + field + "'"), std::string::npos) << json << ": " << m;
  }
  EXPECT_NE(format_error(R"({"top_p": 5})").find("(0, 1]"), std::string::npos);
}

TEST(GenerationConfig, ValuesInRangeAreTaken) {
  const GenerationConfig g =
      parse_generation_config(R"({"do_sample": true, "top_p": 1, "temperature": 0, "top_k": 0})", "g.json");
  EXPECT_EQ(g.top_p, 1.0);
  EXPECT_EQ(g.temperature, 0.0);
  EXPECT_EQ(g.top_k, 0);
  EXPECT_EQ(parse_generation_config(R"({"top_p": 0.001})", "g.json").top_p, 0.001);
}

}  // namespace
}  // namespace fourfold::model
