// Runs the built `clustersim` binary (CLUSTERSIM_BINARY) as a user would, from a fresh temporary
// directory per test, and captures its exit code, stdout and stderr.
#pragma once

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace clustersim::cli::testing {

namespace fs = std::filesystem;

inline const std::string kBinary = CLUSTERSIM_BINARY;
inline const std::string kScenarios = CLUSTERSIM_SCENARIOS_DIR;

struct Outcome {
  int code = -1;
  std::string out;
  std::string err;
};

inline std::string read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// Single-quotes an argument for /bin/sh.
inline std::string quote(const std::string& arg) {
  std::string q = "'";
  for (char c : arg)
    q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

// A temporary directory, removed with everything in it at the end of the test.
class TempDir {
 public:
  TempDir() {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    std::string name = info ? std::string(info->test_suite_name()) + "." + info->name() : "cli";
    for (char& c : name)
      if (c == '/') c = '_';
    path_ =
        fs::temp_directory_path() / ("clustersim-cli-" + std::to_string(::getpid()) + "-" + name);
    fs::remove_all(path_);
    fs::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const fs::path& path() const { return path_; }
  fs::path operator/(const std::string& name) const { return path_ / name; }
  // Writes `text` to a file of this directory and returns its path.
  fs::path write(const std::string& name, const std::string& text) const {
    std::ofstream(path_ / name, std::ios::binary) << text;
    return path_ / name;
  }
  // Names of the entries in the directory, sorted.
  std::vector<std::string> entries() const {
    std::vector<std::string> names;
    for (const auto& e : fs::directory_iterator(path_))
      names.push_back(e.path().filename().string());
    std::sort(names.begin(), names.end());
    return names;
  }

 private:
  fs::path path_;
};

// Runs `clustersim ARGS...` with stdout and stderr captured in files of `dir`.
inline Outcome run_cli(const std::vector<std::string>& args, const TempDir& dir) {
  const fs::path out = dir / ".stdout";
  const fs::path err = dir / ".stderr";
  std::string cmd = quote(kBinary);
  for (const auto& a : args)
    cmd += " " + quote(a);
  cmd += " >" + quote(out.string()) + " 2>" + quote(err.string()) + " </dev/null";
  const int status = std::system(cmd.c_str());
  Outcome o;
  o.code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  o.out = read_file(out);
  o.err = read_file(err);
  fs::remove(out);
  fs::remove(err);
  return o;
}

// Every scenario shipped under scenarios/, sorted, so new ones are covered automatically.
inline std::vector<std::string> scenario_files() {
  std::vector<std::string> files;
  for (const auto& e : fs::directory_iterator(kScenarios))
    if (e.path().extension() == ".yaml") files.push_back(e.path().filename().string());
  std::sort(files.begin(), files.end());
  return files;
}

}  // namespace clustersim::cli::testing
