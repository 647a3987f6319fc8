#include "calibrate/nccl_tests_import.hpp"

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <optional>
#include <regex>
#include <set>
#include <sstream>
#include <stdexcept>

#include "calibrate/fit.hpp"

namespace clustersim::calibrate {

namespace {

// Up to 80 bytes of a line for a message, control and non-ASCII bytes as \xNN: a binary file
// must not send raw bytes to the terminal (a NUL used to cut the message short).
std::string printable(std::string_view line) {
  std::string out;
  for (const char c : line.substr(0, 80)) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte >= 0x20 && byte < 0x7F) {
      out += c;
      continue;
    }
    char hex[8];
    std::snprintf(hex, sizeof hex, "\\x%02X", byte);
    out += hex;
  }
  return out;
}

std::vector<std::string> split_ws(std::string_view s) {
  std::vector<std::string> out;
  std::istringstream in{std::string(s)};
  for (std::string t; in >> t;)
    out.push_back(t);
  return out;
}

std::optional<std::uint64_t> to_uint(const std::string& s) {
  std::uint64_t v = 0;
  const auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size()) return std::nullopt;
  return v;
}

std::optional<double> to_double(const std::string& s) {
  try {
    std::size_t used = 0;
    const double v = std::stod(s, &used);
    if (used != s.size()) return std::nullopt;
    return v;
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

// nccl-tests binary (all_reduce_perf, alltoall_perf_mpi, ...) -> engine's collective name.
std::optional<std::string> collective_of_binary(std::string_view text) {
  static const std::pair<const char*, const char*> kBinaries[] = {
      {"all_reduce_perf", "all_reduce"},
      {"all_gather_perf", "all_gather"},
      {"reduce_scatter_perf", "reduce_scatter"},
      {"alltoall_perf", "all_to_all"},
      {"broadcast_perf", "broadcast"},
      {"sendrecv_perf", "send_recv"},
      {"scatter_perf", "scatter"},
      {"gather_perf", "gather"},
      {"reduce_perf", "reduce"}};
  // Longest names first in the table where one contains another (reduce_scatter before reduce,
  // all_gather before gather); the first match wins.
  for (const auto& [binary, name] : kBinaries)
    if (text.find(binary) != std::string_view::npos) return std::string(name);
  return std::nullopt;
}

// "22105" (NCCL_VERSION_CODE) -> "2.21.5"; codes before 2.9 used major*1000 + minor*100 + patch.
std::string version_from_code(std::uint64_t code) {
  const auto major = code >= 10000 ? code / 10000 : code / 1000;
  const auto minor = code >= 10000 ? (code / 100) % 100 : (code / 100) % 10;
  return std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(code % 100);
}

// The table's columns as named by its header line.
struct Layout {
  std::size_t size = 0, count = 0, type = 0;  // indexes relative to the "size" column
  std::size_t lead = 0;                       // columns from size up to the first "time"
  struct Half {
    bool in_place = false;
    std::size_t time = 0, algbw = 0, busbw = 0;
    std::optional<std::size_t> wrong;  // "#wrong" or the older "error"
  };
  std::vector<Half> halves;
  std::size_t width = 0;
};

std::optional<Layout> header_layout(const std::vector<std::string>& cols, bool only_in_place) {
  std::vector<std::string> c = cols;
  if (!c.empty() && c[0] == "#") c.erase(c.begin());
  const auto at = [&](std::string_view name) {
    return std::find(c.begin(), c.end(), name) - c.begin();
  };
  const auto n = static_cast<std::ptrdiff_t>(c.size());
  if (at("size") == n || at("count") == n || at("type") == n || at("time") == n ||
      at("algbw") == n || at("busbw") == n)
    return std::nullopt;
  Layout l;
  const auto size_at = static_cast<std::size_t>(at("size"));
  l.count = static_cast<std::size_t>(at("count")) - size_at;
  l.type = static_cast<std::size_t>(at("type")) - size_at;
  for (std::size_t i = size_at; i < c.size(); ++i) {
    if (c[i] != "time") continue;
    Layout::Half h;
    h.time = i - size_at;
    for (std::size_t j = i + 1; j < c.size() && c[j] != "time"; ++j) {
      if (c[j] == "algbw") h.algbw = j - size_at;
      if (c[j] == "busbw") h.busbw = j - size_at;
      if (c[j] == "#wrong" || c[j] == "error" || c[j] == "wrong") h.wrong = j - size_at;
    }
    if (h.algbw == 0 || h.busbw == 0) return std::nullopt;
    l.halves.push_back(h);
  }
  if (l.halves.empty() || l.halves.size() > 2) return std::nullopt;
  l.halves[0].in_place = l.halves.size() == 1 && only_in_place;
  if (l.halves.size() == 2) l.halves[1].in_place = true;
  l.lead = l.halves[0].time;
  l.width = c.size() - size_at;
  return l;
}

// Where the row's "size" column sits: the first integer, integer, word triple (size count type);
// anything before it is a per-line prefix (mpirun --tag-output, a timestamp).
std::optional<std::size_t> row_anchor(const std::vector<std::string>& t) {
  for (std::size_t p = 0; p + 2 < t.size(); ++p) {
    if (to_uint(t[p]) && to_uint(t[p + 1]) && std::isalpha(static_cast<unsigned char>(t[p + 2][0])))
      return p;
  }
  return std::nullopt;
}

bool is_nccl_debug_line(std::string_view line) {
  return line.find("NCCL INFO") != std::string_view::npos ||
         line.find("NCCL WARN") != std::string_view::npos ||
         line.find("NCCL TRACE") != std::string_view::npos;
}

// The part of a comment line from its '#' on; nullopt for a line that is not a comment.
std::optional<std::string_view> comment(std::string_view line) {
  const auto hash = line.find('#');
  if (hash == std::string_view::npos) return std::nullopt;
  const auto first = line.find_first_not_of(" \t\r");
  // A '#' after a prefix (mpirun "[1,0]<stdout>:" or a timestamp) still starts a comment, unless
  // a digit comes first: then it is a row whose #wrong header was copied by mistake.
  if (first != hash) {
    const std::string_view before = line.substr(first, hash - first);
    if (std::all_of(before.begin(), before.end(), [](char ch) {
          return std::isdigit(static_cast<unsigned char>(ch)) || ch == ' ';
        }))
      return std::nullopt;
  }
  return line.substr(hash);
}

[[noreturn]] void fail_at(const std::string& name, std::size_t line_no, const std::string& what) {
  throw ImportError(name + ":" + std::to_string(line_no) + ": " + what);
}

// "1 row", "2 rows".
std::string counted(std::uint64_t n, const std::string& noun) {
  return std::to_string(n) + " " + noun + (n == 1 ? "" : "s");
}

}  // namespace

NcclTestsLog parse_nccl_tests_log(std::istream& in, const std::string& name,
                                  const std::string& collective) {
  return parse_nccl_tests_log(in, name, NcclTestsOptions{collective, {}});
}

NcclTestsLog parse_nccl_tests_log(std::istream& in, const std::string& name,
                                  const NcclTestsOptions& options) {
  static const std::regex kRank(
      R"(#\s*Rank\s+(\d+)\s+(?:Group\s+\d+\s+)?Pid\s+\d+\s+on\s+(\S+)\s+device\s+\d+\s+\[[^\]]*\]\s+(.*\S))");
  static const std::regex kVersion(R"([nr]ccl-tests version\s+(\S+)(?:.*nccl-library=(\d+))?)");
  // "NCCL INFO NCCL version 2.21.5+cuda12.4", or NCCL_DEBUG=VERSION's bare "NCCL version ...";
  // RCCL prints "RCCL version 2.20.5+hip6.2".
  static const std::regex kLibraryVersion(R"([NR]CCL version\s*:?\s*(\d+\.\d+\.\d+))");
  // rccl-tests prints its header's version lines without a '#'.
  static const std::regex kRcclTestsVersion(R"(^\s*rccl-tests: Version\s+(\S+))");
  static const std::regex kRcclHeader(
      R"(^\s*(RCCL version|HIP version|ROCm version|Hostname|Librccl path)\s*:)");

  const std::string& stated = options.collective;
  NcclTestsLog log;
  std::optional<std::string> collective =
      stated.empty() ? collective_of_binary(std::filesystem::path(name).filename().string())
                     : std::optional(stated);
  std::optional<Layout> layout;
  ShapeEvidence evidence;
  std::size_t test_first_row = 0, test_first_line = 0;
  bool previous_in_place_only = false;
  std::size_t line_no = 0, first_content_line = 0;
  const auto has_rows = [&] { return log.rows.size() > test_first_row; };
  // A test ends where the next one's lines begin (version, "starting", device list, header) or at
  // the end of the log; its shape is decided then, from everything it printed.
  const auto end_test = [&] {
    if (has_rows()) {
      NcclTestsRun run;
      run.collective = log.rows[test_first_row].collective;
      run.first_row = test_first_row;
      run.row_count = log.rows.size() - test_first_row;
      run.first_line = test_first_line;
      const std::vector<CollectiveMeasurement> rows(log.rows.begin() + test_first_row,
                                                    log.rows.end());
      evidence.collective = run.collective;
      try {
        run.shape = resolve_shape(evidence, rows, options.shape);
      } catch (const std::invalid_argument& e) {
        fail_at(name, test_first_line, run.collective + " test: " + e.what());
      }
      for (std::size_t i = run.first_row; i < log.rows.size(); ++i) {
        log.rows[i].ranks = run.shape.ranks;
        log.rows[i].nodes = run.shape.nodes;
      }
      log.tests.push_back(std::move(run));
      // Only a test with rows ends: rank lines before a version or "starting" line of the same
      // test (rccl-tests prints its version after nThread) stay its evidence.
      evidence = ShapeEvidence{};
    }
    test_first_row = log.rows.size();
  };
  const auto skip = [&](const std::string& line, bool debug) {
    ++(debug ? log.skipped_debug_lines : log.skipped_other_lines);
    if (!debug && log.first_skipped_line == 0) {
      log.first_skipped_line = line_no;
      log.first_skipped = printable(line);
    }
  };
  for (std::string line; std::getline(in, line);) {
    ++line_no;
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    if (first_content_line == 0) first_content_line = line_no;
    std::smatch m;
    if (is_nccl_debug_line(line)) {
      if (log.nccl_version.empty() && std::regex_search(line, m, kLibraryVersion))
        log.nccl_version = m[1];
      skip(line, true);
      continue;
    }
    if (const auto c = comment(line)) {
      const std::string text(*c);
      if (std::regex_search(text, m, kRank)) {
        if (has_rows()) end_test();  // the next test lists its devices again
        // to_uint, not std::stoull: a rank past 64 bits threw std::out_of_range (found by fuzzing).
        const auto rank = to_uint(m[1]);
        if (!rank) fail_at(name, line_no, "rank number '" + m[1].str() + "' is out of range");
        evidence.listed_ranks.insert(*rank);
        if (std::find(evidence.hosts.begin(), evidence.hosts.end(), m[2].str()) ==
            evidence.hosts.end())
          evidence.hosts.push_back(m[2]);
        if (std::find(log.hosts.begin(), log.hosts.end(), m[2].str()) == log.hosts.end())
          log.hosts.push_back(m[2]);
        if (*rank == 0 && log.gpu.empty()) log.gpu = m[3];
      } else if (std::regex_search(text, m, kVersion)) {
        end_test();
        log.tests_version = m[1];
        // The version only labels the profile: a code past 64 bits is left out.
        if (const auto code = m[2].matched ? to_uint(m[2]) : std::nullopt)
          log.nccl_version = version_from_code(*code);
      } else if (text.find("Collective test starting") != std::string::npos) {
        end_test();
        collective = collective_of_binary(text);
        if (!collective)
          fail_at(name, line_no,
                  "unsupported nccl-tests binary in '" + text +
                      "' (supported: all_reduce, all_gather, reduce_scatter, alltoall, "
                      "broadcast, reduce, sendrecv, scatter, gather)");
        if (!stated.empty() && *collective != stated)
          fail_at(name, line_no,
                  "the log is a " + *collective + " test but --collective says " + stated +
                      "; allowed: --collective " + *collective + ", or leave it out");
      } else if (auto l = header_layout(split_ws(text), previous_in_place_only)) {
        if (has_rows()) end_test();
        layout = l;
      } else if (text.find("(B)") == std::string::npos) {
        previous_in_place_only = text.find("in-place") != std::string::npos &&
                                 text.find("out-of-place") == std::string::npos;
      }
      continue;
    }
    if (std::regex_search(line, m, kRcclTestsVersion)) {
      end_test();
      log.tests_version = m[1];
      continue;
    }
    if (std::regex_search(line, kRcclHeader)) {
      if (log.nccl_version.empty() && std::regex_search(line, m, kLibraryVersion))
        log.nccl_version = m[1];
      continue;
    }
    // Not a comment: a result row once a table header was seen, else a line of something else.
    const auto t = split_ws(line);
    const auto p = row_anchor(t);
    if (!p || !layout) {
      if (log.nccl_version.empty() && std::regex_search(line, m, kLibraryVersion))
        log.nccl_version = m[1];
      skip(line, false);
      continue;
    }
    if (!collective)
      fail_at(name, line_no,
              "cannot tell which collective this is: the log has no '# Collective test "
              "starting: <binary>' line and the file is not named after the binary "
              "(e.g. all_reduce_perf.log); allowed: --collective NAME (all_reduce, "
              "all_gather, ...) to say which it is");
    if (!has_rows()) test_first_line = line_no;
    const auto col = [&](std::size_t i) -> const std::string& {
      if (*p + i >= t.size())
        fail_at(name, line_no,
                "result row has " + std::to_string(t.size() - *p) +
                    " columns from 'size' on; the header names " + std::to_string(layout->width));
      return t[*p + i];
    };
    for (const auto& h : layout->halves) {
      CollectiveMeasurement r;
      r.collective = *collective;
      r.bytes = static_cast<double>(*to_uint(col(0)));
      r.count = *to_uint(col(layout->count));
      r.dtype = col(layout->type);
      r.in_place = h.in_place;
      const auto time_us = to_double(col(h.time));
      const auto algbw = to_double(col(h.algbw));
      const auto busbw = to_double(col(h.busbw));
      if (!time_us || !algbw || !busbw || !(*time_us > 0.0))
        fail_at(name, line_no, "expected positive numbers in the time, algbw and busbw columns");
      r.seconds = *time_us * 1e-6;
      r.algbw = *algbw * 1e9;
      r.busbw = *busbw * 1e9;
      if (h.wrong) {
        const std::string& w = col(*h.wrong);
        if (w == "N/A") {
          r.wrong = -1;
        } else if (const auto v = to_double(w); v && *v >= 0.0) {
          // Bounded before the conversion: a double past int64 does not convert (found by
          // fuzzing); any count above one only says the results were wrong.
          constexpr double kMaxWrong = 1e18;
          r.wrong = *v == 0.0 ? 0
                              : std::max<std::int64_t>(
                                    1, static_cast<std::int64_t>(std::min(*v, kMaxWrong)));
        } else {
          fail_at(name, line_no,
                  "expected a count or N/A in the #wrong column, got '" + printable(w) + "'");
        }
      }
      log.rows.push_back(std::move(r));
    }
  }
  end_test();
  if (log.rows.empty()) {
    std::string seen;
    if (log.first_skipped_line != 0)
      seen = "; the first line that is not nccl-tests output is line " +
             std::to_string(log.first_skipped_line) + ": '" + log.first_skipped + "'";
    throw ImportError(name + ":" + std::to_string(std::max<std::size_t>(1, first_content_line)) +
                      ": not nccl-tests output: no result table found (expected a '#  size  count  "
                      "type ... time  algbw  busbw' header followed by rows)" +
                      seen);
  }
  return log;
}

NcclTestsLog read_nccl_tests_log(const std::string& path, const std::string& collective) {
  return read_nccl_tests_log(path, NcclTestsOptions{collective, {}});
}

NcclTestsLog read_nccl_tests_log(const std::string& path, const NcclTestsOptions& options) {
  std::ifstream in(path);
  if (!in) throw ImportError(path + ": cannot open the nccl-tests log");
  return parse_nccl_tests_log(in, path, options);
}

Profile import_nccl_tests(const std::vector<std::string>& paths, const std::string& collective) {
  return import_nccl_tests(paths, NcclTestsOptions{collective, {}}, nullptr);
}

Profile import_nccl_tests(const std::vector<std::string>& paths, const NcclTestsOptions& options,
                          std::vector<std::string>* summary) {
  if (paths.empty()) throw ImportError("import-nccl-tests: no log file given");
  Profile p;
  p.provenance.backend = "nccl-tests";
  p.provenance.date = utc_now_iso8601();
  p.provenance.host = host_name();
  std::uint32_t nodes = 1;
  std::set<std::string> hosts;
  for (const auto& path : paths) {
    NcclTestsLog log = read_nccl_tests_log(path, options);
    if (p.provenance.gpu.empty()) p.provenance.gpu = log.gpu;
    if (p.provenance.nccl_version.empty()) p.provenance.nccl_version = log.nccl_version;
    if (summary) {
      for (const auto& t : log.tests)
        summary->push_back(path + ":" + std::to_string(t.first_line) + ": " + t.collective + ", " +
                           counted(t.row_count, "row") + ", " + counted(t.shape.ranks, "rank") +
                           " (" + t.shape.ranks_from + "), " + counted(t.shape.nodes, "node") +
                           " (" + t.shape.nodes_from + ")");
      if (log.skipped_debug_lines + log.skipped_other_lines != 0) {
        std::string line = path + ": skipped " + counted(log.skipped_other_lines, "line") +
                           " that " + (log.skipped_other_lines == 1 ? "is" : "are") +
                           " not nccl-tests output and " +
                           counted(log.skipped_debug_lines, "NCCL debug line");
        if (log.first_skipped_line != 0)
          line += "; the first, line " + std::to_string(log.first_skipped_line) + ": '" +
                  log.first_skipped + "'";
        summary->push_back(std::move(line));
      }
    }
    hosts.insert(log.hosts.begin(), log.hosts.end());
    for (const auto& t : log.tests)
      nodes = std::max(nodes, t.shape.nodes);
    for (auto& r : log.rows) {
      p.provenance.ranks = std::max(p.provenance.ranks, r.ranks);
      p.measurements.collectives.push_back(std::move(r));
    }
    p.provenance.sources.push_back(path);
  }
  // The hosts the logs name, or the largest test's node count where they name fewer.
  p.provenance.nodes = std::max(nodes, static_cast<std::uint32_t>(hosts.size()));
  try {
    fit_profile(p);
  } catch (const std::invalid_argument& e) {
    // Too few points to fit is a property of the logs given: bad input, not a failure.
    std::string names;
    for (const auto& path : paths)
      names += (names.empty() ? "" : ", ") + path;
    throw ImportError(
        names + ": " + e.what() +
        "; allowed: logs of at least 2 GPUs that sweep at least two sizes per collective and group "
        "(nccl-tests -b 8 -e 128M -f 2)");
  }
  return p;
}

}  // namespace clustersim::calibrate
