// fourfold sweep: placeholder until the reference ops land.
#include "commands.h"

namespace fourfold::cli {

void register_sweep(CLI::App& app) {
  app.add_subcommand("sweep", "correctness sweep of the reference tier");
}

}  // namespace fourfold::cli
