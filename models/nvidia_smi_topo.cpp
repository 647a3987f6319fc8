#include "models/nvidia_smi_topo.hpp"

#include <algorithm>
#include <fstream>
#include <map>
#include <optional>
#include <regex>
#include <sstream>

namespace clustersim::models {

namespace {

[[noreturn]] void fail_at(const std::string& name, std::size_t line, const std::string& what) {
  throw TopoParseError(name + ":" + std::to_string(line) + ": " + what);
}

std::string trim(std::string s) {
  const auto b = s.find_first_not_of(" \t\r");
  if (b == std::string::npos) return {};
  return s.substr(b, s.find_last_not_of(" \t\r") - b + 1);
}

// nvidia-smi underlines the header on a terminal (ESC[4m ... ESC[0m); drop the escapes.
std::string strip_ansi(const std::string& s) {
  static const std::regex kEscape("\x1b\\[[0-9;]*m");
  return std::regex_replace(s, kEscape, "");
}

std::vector<std::string> split_tabs(const std::string& line) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (true) {
    const auto tab = line.find('\t', start);
    out.push_back(trim(line.substr(start, tab == std::string::npos ? tab : tab - start)));
    if (tab == std::string::npos) break;
    start = tab + 1;
  }
  return out;
}

// nvidia-smi separates columns by tabs; pasted from a web page or a terminal they become spaces.
// Then the header's names of more than one word are joined again.
std::vector<std::string> split_cells(const std::string& line) {
  if (line.find('\t') != std::string::npos) return split_tabs(line);
  std::vector<std::string> words;
  std::istringstream in(line);
  for (std::string w; in >> w;)
    words.push_back(w);
  static const std::vector<std::vector<std::string>> kPhrases = {
      {"GPU", "NUMA", "ID"}, {"CPU", "Affinity"}, {"NUMA", "Affinity"}};
  std::vector<std::string> out;
  for (std::size_t i = 0; i < words.size();) {
    std::size_t used = 1;
    std::string cell = words[i];
    for (const auto& phrase : kPhrases)
      if (i + phrase.size() <= words.size() &&
          std::equal(phrase.begin(), phrase.end(),
                     words.begin() + static_cast<std::ptrdiff_t>(i))) {
        used = phrase.size();
        cell.clear();
        for (const auto& w : phrase)
          cell += (cell.empty() ? "" : " ") + w;
        break;
      }
    out.push_back(cell);
    i += used;
  }
  return out;
}

bool is_gpu(const std::string& n) {
  return std::regex_match(n, std::regex("GPU[0-9]+"));
}
// NIC0 in current drivers; older ones print the device name (mlx5_0) as the column.
bool is_nic(const std::string& n) {
  return std::regex_match(n, std::regex("NIC[0-9]+|mlx[0-9]+_[0-9]+|[a-z]+[0-9]*_[0-9]+"));
}

struct Cell {
  std::optional<TopoLink> link;  // nullopt: X (self)
  int nvlinks = 0;
};

std::optional<Cell> parse_cell(const std::string& c) {
  // At most 3 digits: std::stoi threw std::out_of_range on NV99999999999.
  static const std::regex kNv("NV([0-9]{1,3})");
  std::smatch m;
  if (c == "X") return Cell{};
  if (std::regex_match(c, m, kNv)) return Cell{TopoLink::nvlink, std::stoi(m[1])};
  if (c == "PIX") return Cell{TopoLink::pix, 0};
  if (c == "PXB") return Cell{TopoLink::pxb, 0};
  if (c == "PHB") return Cell{TopoLink::phb, 0};
  if (c == "NODE") return Cell{TopoLink::node, 0};
  if (c == "SYS" || c == "SOC") return Cell{TopoLink::sys, 0};  // SOC: drivers before 384
  return std::nullopt;
}

}  // namespace

std::string_view to_string(TopoLink l) {
  switch (l) {
    case TopoLink::nvlink:
      return "nvlink";
    case TopoLink::pix:
      return "PIX";
    case TopoLink::pxb:
      return "PXB";
    case TopoLink::phb:
      return "PHB";
    case TopoLink::node:
      return "NODE";
    case TopoLink::sys:
      return "SYS";
  }
  return "?";
}

TopoDescription parse_nvidia_smi_topo(std::istream& in, const std::string& name) {
  std::vector<std::string> header;
  std::size_t devices = 0;  // leading header columns that name devices
  std::map<std::string, std::vector<std::pair<std::size_t, std::vector<std::string>>>> rows;
  std::vector<std::string> row_order;
  std::map<std::string, std::string> nic_legend;
  static const std::regex kLegend(R"(\s*(NIC[0-9]+)\s*:\s*(\S+)\s*)");
  bool in_legend = false, matrix_done = false;
  std::size_t line_no = 0, first_line = 0;
  std::string first_text;
  for (std::string raw; std::getline(in, raw);) {
    ++line_no;
    const std::string line = strip_ansi(raw);
    const std::string t = trim(line);
    if (t.empty()) continue;
    if (first_line == 0) {
      first_line = line_no;
      first_text = t.substr(0, 80);
      for (char& ch : first_text)  // a binary file must not send raw bytes to the terminal
        if (static_cast<unsigned char>(ch) < 0x20 || static_cast<unsigned char>(ch) >= 0x7F)
          ch = '?';
    }
    if (t.rfind("Legend", 0) == 0 || t.rfind("NIC Legend", 0) == 0) {
      in_legend = true;
      continue;
    }
    if (in_legend) {
      std::smatch m;
      if (std::regex_match(line, m, kLegend)) nic_legend[m[1]] = m[2];
      continue;
    }
    if (matrix_done) continue;
    auto cells = split_cells(line);
    if (header.empty()) {
      if (!cells.empty() && cells[0].empty()) cells.erase(cells.begin());
      std::size_t named = 0;
      for (const auto& c : cells) {
        if (!is_gpu(c) && !is_nic(c)) break;
        ++named;
      }
      // What comes before the header (a shell prompt, the command itself) is not the matrix.
      if (named == 0 || !is_gpu(cells[0])) continue;
      devices = named;
      header = cells;
      continue;
    }
    const std::string& dev = cells[0];
    const auto devices_end = header.begin() + static_cast<std::ptrdiff_t>(devices);
    if (std::find(header.begin(), devices_end, dev) == devices_end) {
      // Text after the matrix (a prompt, a note) ends it; a device row the header lacks is wrong.
      if (!row_order.empty() && !is_gpu(dev) && !is_nic(dev)) {
        matrix_done = true;
        continue;
      }
      fail_at(name, line_no, "row '" + dev + "' names no column of the header");
    }
    if (cells.size() < devices + 1)
      fail_at(name, line_no,
              "row " + dev + " has " + std::to_string(cells.size() - 1) +
                  " cells; the header names " + std::to_string(devices) + " devices");
    rows[dev].emplace_back(line_no, std::vector<std::string>(cells.begin() + 1, cells.end()));
    row_order.push_back(dev);
  }
  if (header.empty())
    fail_at(name, std::max<std::size_t>(1, first_line),
            "not `nvidia-smi topo -m` output: expected a header of GPU0, GPU1, ... columns" +
                (first_text.empty() ? std::string("; the file is empty")
                                    : "; the first line is '" + first_text + "'"));

  TopoDescription d;
  std::map<std::string, std::size_t> column;
  for (std::size_t i = 0; i < devices; ++i)
    column[header[i]] = i;
  const auto cell_of = [&](const std::string& a, const std::string& b) -> Cell {
    const auto it = rows.find(a);
    if (it == rows.end()) fail_at(name, line_no, "no row for " + a);
    const auto& [ln, cells] = it->second.front();
    const std::string& text = cells[column.at(b)];
    const auto c = parse_cell(text);
    if (!c)
      fail_at(name, ln,
              "unknown connection '" + text + "' between " + a + " and " + b +
                  " (allowed: X, NV#, PIX, PXB, PHB, NODE, SYS)");
    if (!c->link && a != b) fail_at(name, ln, "X (self) between different devices " + a + ", " + b);
    return *c;
  };
  for (std::size_t i = 0; i < devices; ++i) {
    const std::string& dev = header[i];
    if (!rows.contains(dev))
      fail_at(name, line_no, "the matrix has a column but no row for " + dev);
    if (rows[dev].size() > 1) fail_at(name, rows[dev][1].first, "second row for " + dev);
    TopoDevice td{dev, {}, {}, {}};
    const auto& extra = rows[dev].front().second;
    for (std::size_t k = devices; k < header.size() && k < extra.size(); ++k) {
      if (header[k] == "CPU Affinity") td.cpu_affinity = extra[k];
      if (header[k] == "NUMA Affinity") td.numa_affinity = extra[k];
    }
    if (is_gpu(dev)) {
      d.gpus.push_back(td);
    } else {
      const auto legend = nic_legend.find(dev);
      td.nic_device = legend != nic_legend.end() ? legend->second : dev;
      d.nics.push_back(td);
    }
  }
  for (std::size_t i = 0; i < devices; ++i)
    for (std::size_t j = 0; j < devices; ++j) {
      const Cell a = cell_of(header[i], header[j]), b = cell_of(header[j], header[i]);
      if (a.link != b.link || a.nvlinks != b.nvlinks)
        fail_at(name, rows[header[i]].front().first,
                "the matrix is not symmetric between " + header[i] + " and " + header[j]);
      if (i >= j) continue;
      TopoPair p{header[i], header[j], *a.link, a.nvlinks};
      const bool gi = is_gpu(header[i]), gj = is_gpu(header[j]);
      if (gi && gj)
        d.gpu_pairs.push_back(p);
      else if (gi != gj)
        d.gpu_nic_pairs.push_back(p);
    }
  if (d.gpus.empty()) fail_at(name, 1, "no GPU in the matrix");
  return d;
}

TopoDescription read_nvidia_smi_topo(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw TopoParseError(path + ": cannot open");
  return parse_nvidia_smi_topo(in, path);
}

std::string TopoDescription::recommended_fabric() const {
  const bool all_nvlink = std::all_of(gpu_pairs.begin(), gpu_pairs.end(),
                                      [](const TopoPair& p) { return p.link == TopoLink::nvlink; });
  return all_nvlink && !gpu_pairs.empty() ? "nvswitch" : "pcie";
}

std::vector<TopoPair> TopoDescription::pcie_only_pairs() const {
  std::vector<TopoPair> out;
  for (const auto& p : gpu_pairs)
    if (p.link != TopoLink::nvlink) out.push_back(p);
  return out;
}

std::vector<std::string> TopoDescription::nearest_nics(const std::string& gpu) const {
  std::vector<const TopoPair*> mine;
  for (const auto& p : gpu_nic_pairs)
    if (p.a == gpu || p.b == gpu) mine.push_back(&p);
  if (mine.empty()) return {};
  const auto best = (*std::min_element(mine.begin(), mine.end(), [](const auto* x, const auto* y) {
                      return x->link < y->link;
                    }))->link;
  std::vector<std::string> out;
  for (const auto* p : mine)
    if (p->link == best) out.push_back(p->a == gpu ? p->b : p->a);
  return out;
}

}  // namespace clustersim::models
