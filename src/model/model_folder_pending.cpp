// Stand-in for the loader's load_model_folder until its branch is merged. DELETE THIS FILE at that merge (the
// duplicate definition would otherwise fail the link, which is the point: it cannot be forgotten silently).
#include "fourfold/errors.h"
#include "model/model_folder.h"

namespace fourfold::model {

LoadedModel load_model_folder(const std::string& directory) {
  fail<UnsupportedError>("load_model_folder", "--model", "a build with the safetensors loader (not merged yet)",
                         directory);
}

}  // namespace fourfold::model
