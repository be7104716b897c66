// Runs the fourfold command as a user does, for the tests in tests/tools (FOURFOLD_CLI is the built binary).
#pragma once

#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace fourfold::testing {

struct CliResult {
  int status = 0;     // the exit code, or 128 + the signal that ended it
  std::string out;    // stdout and stderr together
};

// `command` through /bin/sh.
inline CliResult shell(const std::string& command) {
  CliResult r;
  FILE* pipe = popen((command + " 2>&1").c_str(), "r");
  if (!pipe) return {-1, "popen failed"};
  std::array<char, 4096> buffer;
  for (size_t n; (n = fread(buffer.data(), 1, buffer.size(), pipe)) > 0;) r.out.append(buffer.data(), n);
  const int status = pclose(pipe);
  r.status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return r;
}

inline CliResult fourfold(const std::string& args) { return shell(std::string(FOURFOLD_CLI) + " " + args); }

// Exit code 2 (usage or input error) with every fragment in the message.
inline ::testing::AssertionResult refused_with(const CliResult& r, const std::vector<std::string>& fragments) {
  if (r.status != 2) return ::testing::AssertionFailure() << "exit " << r.status << ":\n" << r.out;
  for (const std::string& f : fragments)
    if (r.out.find(f) == std::string::npos)
      return ::testing::AssertionFailure() << "message lacks '" << f << "': " << r.out;
  return ::testing::AssertionSuccess();
}

}  // namespace fourfold::testing
