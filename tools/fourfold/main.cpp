// The fourfold command: one file per command (see commands.h).
#include <cstdio>
#include <exception>
#include <new>
#include <string>

#include <CLI/CLI.hpp>

#include "commands.h"
#include "fourfold/errors.h"

namespace {

std::string while_working_on() {
  const std::string& input = fourfold::cli::current_input();
  return input.empty() ? std::string() : " while working on " + input;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"fourfold: dedicated inference kernels, judged on four separate records"};
  app.require_subcommand(1);
  fourfold::cli::register_info(app);
  fourfold::cli::register_sweep(app);
  fourfold::cli::register_compare(app);
  fourfold::cli::register_bench(app);
  fourfold::cli::register_check(app);
  fourfold::cli::register_run(app);
  fourfold::cli::register_make_model(app);
  fourfold::cli::register_quantize(app);
  fourfold::cli::register_vae(app);
  fourfold::cli::refuse_empty_values(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  } catch (const fourfold::OutOfMemoryError& e) {
    std::fprintf(stderr, "fourfold: out of memory%s: %s\n", while_working_on().c_str(), e.what());
    return 2;
  } catch (const fourfold::Error& e) {
    std::fprintf(stderr, "fourfold: %s\n", e.what());
    return 2;
  } catch (const std::bad_alloc&) {
    std::fprintf(stderr, "fourfold: out of memory%s (the input asks for more than this machine has)\n",
                 while_working_on().c_str());
    return 2;
  } catch (const std::exception& e) {
    // A standard exception (a folder that cannot be created, a thread that cannot start...) is still an input or
    // environment error with a message, never an abort. Exit 1 stays "a check failed its threshold".
    std::fprintf(stderr, "fourfold: %s\n", e.what());
    return 2;
  }
  return fourfold::cli::exit_code();
}
