// clustersim: predict how one training iteration runs on a GPU cluster (DESIGN.md "Commands").
#include <iostream>

#include "cli/calibrate_command.hpp"
#include "cli/command.hpp"
#include "cli/presets_command.hpp"
#include "cli/run_command.hpp"
#include "cli/validate_command.hpp"
#include "models/frontend.hpp"

int main(int argc, char** argv) {
  using namespace clustersim;
  CLI::App app{"clustersim: simulate a training iteration of a parallel plan on a GPU cluster"};
  app.set_version_flag("--version", std::string("clustersim ") + CLUSTERSIM_VERSION);
  app.require_subcommand(1);
  cli::Action action;
  cli::add_run_command(app, action);
  cli::add_presets_command(app, action);
  cli::add_calibrate_command(app, action);
  cli::add_validate_command(app, action);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int rc = app.exit(e);
    return rc == 0 ? cli::kExitOk : cli::kExitBadInput;
  }
  try {
    return action();
  } catch (const models::ScenarioError& e) {
    std::cerr << "error: " << e.what() << "\n";
    return cli::kExitBadInput;
  } catch (const models::OutputPathError& e) {
    std::cerr << "error: " << e.what() << "\n";
    return cli::kExitBadInput;
  } catch (const cli::BadInput& e) {
    std::cerr << "error: " << e.what() << "\n";
    return cli::kExitBadInput;
  } catch (const std::exception& e) {
    std::cerr << "error: " << e.what() << "\n";
    return cli::kExitFailure;
  }
}
