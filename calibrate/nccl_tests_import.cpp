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

}  // namespace

NcclTestsLog parse_nccl_tests_log(std::istream& in, const std::string& name,
                                  const std::string& stated) {
  static const std::regex kRank(
      R"(#\s*Rank\s+(\d+)\s+(?:Group\s+\d+\s+)?Pid\s+\d+\s+on\s+(\S+)\s+device\s+\d+\s+\[[^\]]*\]\s+(.*\S))");
  static const std::regex kVersion(R"(nccl-tests version\s+(\S+)(?:.*nccl-library=(\d+))?)");
  static const std::regex kDebugVersion(R"(NCCL version\s+(\d+\.\d+\.\d+))");

  NcclTestsLog log;
  std::optional<std::string> collective =
      stated.empty() ? collective_of_binary(std::filesystem::path(name).filename().string())
                     : std::optional(stated);
  std::optional<Layout> layout;
  std::set<std::uint64_t> ranks;
  std::vector<std::string> hosts_now;
  bool rows_since_ranks = false, previous_in_place_only = false;
  std::size_t line_no = 0, first_content_line = 0;
  for (std::string line; std::getline(in, line);) {
    ++line_no;
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    if (first_content_line == 0) first_content_line = line_no;
    if (is_nccl_debug_line(line)) {
      std::smatch m;
      if (log.nccl_version.empty() && std::regex_search(line, m, kDebugVersion))
        log.nccl_version = m[1];
      continue;
    }
    if (const auto c = comment(line)) {
      const std::string text(*c);
      std::smatch m;
      if (std::regex_search(text, m, kRank)) {
        if (rows_since_ranks) {  // a second test in the same log lists its devices again
          ranks.clear();
          hosts_now.clear();
          rows_since_ranks = false;
        }
        // to_uint, not std::stoull: a rank past 64 bits threw std::out_of_range (found by fuzzing).
        const auto rank = to_uint(m[1]);
        if (!rank) fail_at(name, line_no, "rank number '" + m[1].str() + "' is out of range");
        ranks.insert(*rank);
        if (std::find(hosts_now.begin(), hosts_now.end(), m[2].str()) == hosts_now.end())
          hosts_now.push_back(m[2]);
        if (std::find(log.hosts.begin(), log.hosts.end(), m[2].str()) == log.hosts.end())
          log.hosts.push_back(m[2]);
        if (*rank == 0 && log.gpu.empty()) log.gpu = m[3];
      } else if (std::regex_search(text, m, kVersion)) {
        log.tests_version = m[1];
        // The version only labels the profile: a code past 64 bits is left out.
        if (const auto code = m[2].matched ? to_uint(m[2]) : std::nullopt)
          log.nccl_version = version_from_code(*code);
      } else if (text.find("Collective test starting") != std::string::npos) {
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
        layout = l;
      } else if (text.find("(B)") == std::string::npos) {
        previous_in_place_only = text.find("in-place") != std::string::npos &&
                                 text.find("out-of-place") == std::string::npos;
      }
      continue;
    }
    // Not a comment: a result row.
    const auto t = split_ws(line);
    const auto p = row_anchor(t);
    if (!p)
      fail_at(name, line_no,
              "not nccl-tests output: expected a result row (size count type ... time "
              "algbw busbw) or a '#' line, got '" +
                  printable(line) + "'");
    if (!layout)
      fail_at(name, line_no,
              "not nccl-tests output: a result row before the table's column header "
              "('#  size  count  type ... time  algbw  busbw  #wrong')");
    if (!collective)
      fail_at(name, line_no,
              "cannot tell which collective this is: the log has no '# Collective test "
              "starting: <binary>' line and the file is not named after the binary "
              "(e.g. all_reduce_perf.log); allowed: --collective NAME (all_reduce, "
              "all_gather, ...) to say which it is");
    if (ranks.empty())
      fail_at(name, line_no,
              "cannot tell how many GPUs took part: no '#  Rank  N ... on HOST device D' "
              "lines before the table");
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
      r.ranks = static_cast<std::uint32_t>(ranks.size());
      r.nodes = static_cast<std::uint32_t>(std::max<std::size_t>(1, hosts_now.size()));
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
    rows_since_ranks = true;
  }
  if (log.rows.empty())
    throw ImportError(name + ":" + std::to_string(std::max<std::size_t>(1, first_content_line)) +
                      ": not nccl-tests output: no result table found (expected a '#  size  count  "
                      "type ... time  algbw  busbw' header followed by rows)");
  return log;
}

NcclTestsLog read_nccl_tests_log(const std::string& path, const std::string& collective) {
  std::ifstream in(path);
  if (!in) throw ImportError(path + ": cannot open the nccl-tests log");
  return parse_nccl_tests_log(in, path, collective);
}

Profile import_nccl_tests(const std::vector<std::string>& paths, const std::string& collective) {
  if (paths.empty()) throw ImportError("import-nccl-tests: no log file given");
  Profile p;
  p.provenance.backend = "nccl-tests";
  p.provenance.date = utc_now_iso8601();
  p.provenance.host = host_name();
  std::set<std::string> hosts;
  for (const auto& path : paths) {
    NcclTestsLog log = read_nccl_tests_log(path, collective);
    if (p.provenance.gpu.empty()) p.provenance.gpu = log.gpu;
    if (p.provenance.nccl_version.empty()) p.provenance.nccl_version = log.nccl_version;
    hosts.insert(log.hosts.begin(), log.hosts.end());
    for (auto& r : log.rows) {
      p.provenance.ranks = std::max(p.provenance.ranks, r.ranks);
      p.measurements.collectives.push_back(std::move(r));
    }
    p.provenance.sources.push_back(path);
  }
  p.provenance.nodes = static_cast<std::uint32_t>(std::max<std::size_t>(1, hosts.size()));
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
