// `clustersim plan FILE [--gpus N] [--objective time|tokens_per_s|cost] [--top K] [--out
// BEST.yaml]` (docs/plan-search.md): presents models/plan_search.hpp.
#pragma once

#include "cli/command.hpp"

namespace clustersim::cli {
void add_plan_command(CLI::App& app, Action& action);
}
