// clustersim: predict how one training iteration runs on a GPU cluster (DESIGN.md "Commands").
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <iostream>

#include "cli/calibrate_command.hpp"
#include "cli/command.hpp"
#include "cli/compare_command.hpp"
#include "cli/execute_command.hpp"
#include "cli/export_chakra_command.hpp"
#include "cli/import_topo_command.hpp"
#include "cli/plan_command.hpp"
#include "cli/presets_command.hpp"
#include "cli/run_command.hpp"
#include "cli/sweep_command.hpp"
#include "cli/validate_command.hpp"
#include "engine/io/atomic_file.hpp"
#include "engine/simulator.hpp"
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
  cli::add_execute_command(app, action);
  cli::add_compare_command(app, action);
  cli::add_export_chakra_command(app, action);
  cli::add_sweep_command(app, action);
  cli::add_plan_command(app, action);
  cli::add_import_topo_command(app, action);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int rc = app.exit(e);
    return rc == 0 ? cli::kExitOk : cli::kExitBadInput;
  }
  // Ctrl-C or kill during a write removes the temporary file (exit 130 / 143).
  engine::install_interrupt_cleanup();
  try {
    const int rc = action();
    // A summary that could not be written (stdout on a full disk, a closed pipe) is a failure,
    // not a success that printed nothing.
    std::cout.flush();
    if (!std::cout || std::fflush(stdout) != 0 || std::ferror(stdout)) {
      std::cerr << "error: writing to standard output failed: " << std::strerror(errno) << "\n";
      return cli::kExitFailure;
    }
    return rc;
  } catch (const models::ScenarioError& e) {
    std::cerr << "error: " << e.what() << "\n";
    return cli::kExitBadInput;
  } catch (const models::OutputPathError& e) {
    std::cerr << "error: " << e.what() << "\n";
    return cli::kExitBadInput;
  } catch (const engine::ClockOverflow& e) {
    // The scenario's own figures make the run longer than the clock holds: bad input.
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
