// The MPI executor (docs/execution.md). Every rank: load the scenario (front-end API), check the
// launch against the cluster and every rank's schedule against rank 0's, split one communicator
// per process group, align clocks, then run the schedule warmup + iterations times with one
// progress engine: a stream's head op starts when its dependencies are done (collectives in the
// rank's issue order on their group, as MPI requires); compute runs in short slices between which
// communication is progressed and checked; a watchdog ends the job when an op waits too long.
#include "calibrate/mpi/executor.hpp"

#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <set>
#include <sstream>
#include <thread>

#include "calibrate/execution.hpp"
#include "calibrate/host_work.hpp"
#include "calibrate/mpi/exec_comm.hpp"
#include "calibrate/mpi/mpi_session.hpp"
#include "engine/format.hpp"
#include "models/frontend.hpp"

namespace clustersim::calibrate {

namespace {

using engine::OpId;
using engine::OpKind;

constexpr int kExitFailure = 1, kExitBadInput = 2, kExitAborted = 3;

double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

struct World {
  int rank = 0, size = 1;
};

// Every rank's status agreed on: the worst (largest) exit code of any rank.
int agree(int status) {
  MPI_Allreduce(MPI_IN_PLACE, &status, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  return status;
}

[[noreturn]] void abort_job(const std::string& message) {
  std::cerr << message << std::endl;
  std::fflush(stderr);
  MPI_Abort(MPI_COMM_WORLD, kExitAborted);
  std::_Exit(kExitAborted);
}

// "op 17 'bucket 1 all-reduce' (all_reduce of 1 MiB on dp[0] = ranks 0,1)".
std::string describe(const engine::Schedule& s, OpId id) {
  const engine::Op& op = s.ops[id];
  std::string d = "op " + std::to_string(id) + " '" + s.label(op) + "' (";
  const std::string size = engine::format_bytes(static_cast<double>(op.bytes));
  switch (op.kind) {
    case OpKind::collective: {
      const engine::ProcessGroup& g = s.groups.at(op.group_or_peer);
      d += std::string(engine::to_string(op.collective)) + " of " + size + " on " + g.name +
           " = ranks ";
      for (std::size_t i = 0; i < g.ranks.size(); ++i)
        d += (i ? "," : "") + std::to_string(g.ranks[i]);
      break;
    }
    case OpKind::send:
      d += "send of " + size + " to rank " + std::to_string(op.group_or_peer) + ", tag " +
           std::to_string(op.tag());
      break;
    case OpKind::recv:
      d += "recv of " + size + " from rank " + std::to_string(op.group_or_peer) + ", tag " +
           std::to_string(op.tag());
      break;
    default:
      d += std::string(engine::to_string(op.kind));
  }
  return d + ")";
}

// A hash of everything that must agree between ranks for their ops to match.
std::uint64_t fingerprint(const engine::Schedule& s) {
  std::uint64_t h = 1469598103934665603ull;
  auto mix = [&h](std::uint64_t v) {
    for (int i = 0; i < 8; ++i, v >>= 8)
      h = (h ^ (v & 0xff)) * 1099511628211ull;
  };
  mix(s.num_ranks);
  for (const engine::Op& op : s.ops) {
    mix(op.rank);
    mix(static_cast<std::uint64_t>(op.kind));
    mix(op.bytes);
    mix(op.kind == OpKind::compute ? 0 : op.group_or_peer);
    mix(op.tag());
    mix(static_cast<std::uint64_t>(op.collective));
    mix(op.stream);
  }
  for (const auto& g : s.groups)
    for (engine::Rank r : g.ranks)
      mix(r);
  return h;
}

// Host names of all ranks, in rank order.
std::vector<std::string> host_names(const World& w) {
  char name[MPI_MAX_PROCESSOR_NAME] = {};
  int len = 0;
  MPI_Get_processor_name(name, &len);
  std::vector<char> all(static_cast<std::size_t>(w.size) * MPI_MAX_PROCESSOR_NAME);
  MPI_Allgather(name, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, all.data(), MPI_MAX_PROCESSOR_NAME,
                MPI_CHAR, MPI_COMM_WORLD);
  std::vector<std::string> hosts;
  for (int r = 0; r < w.size; ++r)
    hosts.emplace_back(all.data() + static_cast<std::ptrdiff_t>(r) * MPI_MAX_PROCESSOR_NAME);
  return hosts;
}

// Empty when the launch fits the scenario's cluster, else what is wrong. One host may stand in
// for the whole cluster (a CPU run); on several hosts, each node's ranks must share one host.
std::string launch_mismatch(const models::Scenario& sc, const engine::Schedule& s, const World& w,
                            const std::vector<std::string>& hosts) {
  const int per_node = sc.cluster.topology.node.gpus;
  if (static_cast<std::uint32_t>(w.size) != s.num_ranks)
    return "the scenario's cluster has " + std::to_string(s.num_ranks) + " ranks (" +
           std::to_string(sc.cluster.nodes) + " node(s) x " + std::to_string(per_node) +
           " GPUs per node) but mpirun started " + std::to_string(w.size) +
           " process(es); run it with mpirun -np " + std::to_string(s.num_ranks);
  const std::set<std::string> distinct(hosts.begin(), hosts.end());
  if (distinct.size() == 1) return "";
  if (static_cast<int>(distinct.size()) != sc.cluster.nodes)
    return "the scenario's cluster has " + std::to_string(sc.cluster.nodes) +
           " node(s) but the ranks run on " + std::to_string(distinct.size()) + " hosts; start " +
           std::to_string(per_node) + " process(es) per host";
  for (int r = 0; r < w.size; ++r)
    if (hosts[static_cast<std::size_t>(r)] !=
        hosts[static_cast<std::size_t>(r / per_node * per_node)])
      return "rank " + std::to_string(r) + " runs on " + hosts[static_cast<std::size_t>(r)] +
             " but the scenario puts it on node " + std::to_string(r / per_node) + " with rank " +
             std::to_string(r / per_node * per_node) + " (" +
             hosts[static_cast<std::size_t>(r / per_node * per_node)] + "); start " +
             std::to_string(per_node) +
             " consecutive ranks per host (mpirun --map-by ppr:" + std::to_string(per_node) +
             ":node)";
  return "";
}

// Each rank's clock minus rank 0's, by ping-pong with rank 0 (Cristian's method: the reply with
// the shortest round trip, its time taken at the midpoint). Every rank gets the whole vector.
std::vector<double> clock_offsets(const World& w) {
  std::vector<double> offsets(static_cast<std::size_t>(w.size), 0.0);
  for (int r = 1; r < w.size; ++r) {
    double best_rtt = 1e300, best = 0;
    for (int i = 0; i < 8; ++i) {
      if (w.rank == 0) {
        const double t0 = now_s();
        double theirs = 0;
        MPI_Send(&t0, 1, MPI_DOUBLE, r, 1, MPI_COMM_WORLD);
        MPI_Recv(&theirs, 1, MPI_DOUBLE, r, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        const double t1 = now_s();
        if (t1 - t0 < best_rtt) {
          best_rtt = t1 - t0;
          best = theirs - (t0 + t1) / 2;
        }
      } else if (w.rank == r) {
        double t0 = 0;
        MPI_Recv(&t0, 1, MPI_DOUBLE, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        const double mine = now_s();
        MPI_Send(&mine, 1, MPI_DOUBLE, 0, 2, MPI_COMM_WORLD);
      }
    }
    offsets[static_cast<std::size_t>(r)] = best;
  }
  MPI_Bcast(offsets.data(), w.size, MPI_DOUBLE, 0, MPI_COMM_WORLD);
  return offsets;
}

struct Fault {
  enum class Kind { none, skip, kill } kind = Kind::none;
  int rank = -1;
  OpId op = 0;
};

Fault read_fault() {
  Fault f;
  const char* env = std::getenv("CLUSTERSIM_EXECUTE_FAULT");
  if (env == nullptr || *env == '\0') return f;
  char kind[8] = {};
  unsigned rank = 0, op = 0;
  if (std::sscanf(env, "%7[a-z]:%u:%u", kind, &rank, &op) != 3)
    throw std::invalid_argument(std::string("CLUSTERSIM_EXECUTE_FAULT=") + env +
                                ": allowed: skip:RANK:OP or kill:RANK:OP");
  const std::string k = kind;
  if (k != "skip" && k != "kill")
    throw std::invalid_argument("CLUSTERSIM_EXECUTE_FAULT: unknown fault '" + k +
                                "'; allowed: skip, kill");
  f.kind = k == "skip" ? Fault::Kind::skip : Fault::Kind::kill;
  f.rank = static_cast<int>(rank);
  f.op = op;
  return f;
}

// One rank's part of the schedule and the machinery to run it.
class RankRunner {
 public:
  RankRunner(const engine::Schedule& s, const World& w, const ExecuteOptions& o, Fault fault,
             double offset)
      : s_(s), w_(w), o_(o), fault_(fault), offset_(offset), work_(o.work_scale) {
    streams_.resize(s.stream_names.size());
    group_ops_.resize(s.groups.size());
    for (OpId id = 0; id < s.ops.size(); ++id) {
      const engine::Op& op = s.ops[id];
      if (op.rank != static_cast<engine::Rank>(w.rank)) continue;
      local_index_.emplace(id, local_.size());
      local_.push_back(id);
      if (op.stream >= streams_.size()) streams_.resize(op.stream + 1u);
      streams_[op.stream].push_back(id);
      if (op.kind == OpKind::collective) group_ops_[op.group_or_peer].push_back(id);
    }
    comms_.assign(s.groups.size(), MPI_COMM_NULL);
    members_.assign(s.groups.size(), -1);
    for (std::size_t g = 0; g < s.groups.size(); ++g) {
      const auto& ranks = s.groups[g].ranks;
      const auto it = std::find(ranks.begin(), ranks.end(), static_cast<engine::Rank>(w.rank));
      const int member = it == ranks.end() ? -1 : static_cast<int>(it - ranks.begin());
      members_[g] = member;
      MPI_Comm_split(MPI_COMM_WORLD, member < 0 ? MPI_UNDEFINED : 0, member, &comms_[g]);
      if (comms_[g] != MPI_COMM_NULL) MPI_Comm_set_errhandler(comms_[g], MPI_ERRORS_RETURN);
    }
  }
  ~RankRunner() {
    for (MPI_Comm& c : comms_)
      if (c != MPI_COMM_NULL) MPI_Comm_free(&c);
  }
  RankRunner(const RankRunner&) = delete;
  RankRunner& operator=(const RankRunner&) = delete;

  const std::vector<OpId>& local_ops() const { return local_; }
  std::uint64_t checked() const { return checked_; }
  std::uint64_t wrong() const { return wrong_; }

  // Waits at a barrier, under the watchdog. Twice the op timeout: a rank that waits on a
  // specific op times out first and names it, a more useful message than this one.
  void barrier(const std::string& where) {
    MPI_Request req = MPI_REQUEST_NULL;
    MPI_Ibarrier(MPI_COMM_WORLD, &req);
    const double since = now_s();
    for (int flag = 0; !flag;) {
      MPI_Test(&req, &flag, MPI_STATUS_IGNORE);
      if (flag) break;
      if (now_s() - since > 2 * o_.op_timeout_s)
        abort_job(
            "error: rank " + std::to_string(w_.rank) + " " + where + " and has waited " +
            engine::format_number("%.1f", now_s() - since) +
            " s (twice --op-timeout) for the other ranks: a rank lost or skipped an op, or died; "
            "ending the job");
      std::this_thread::yield();
    }
  }

  // Runs every local op once; `times` gets (start, end) per local op on rank 0's clock.
  void run(std::vector<OpTimes>& times) {
    times.assign(local_.size(), {});
    std::vector<std::uint8_t> state(local_.size(), 0);  // 0 waiting, 1 in flight, 2 done
    std::vector<std::size_t> head(streams_.size(), 0);
    std::vector<std::size_t> group_next(group_ops_.size(), 0);
    std::vector<std::pair<CommOp, double>> in_flight;  // op and when it was posted
    std::size_t remaining = local_.size();
    auto clock = [this] { return now_s() - offset_; };
    auto finish = [&](OpId id, double start) {
      const std::size_t i = local_index_.at(id);
      times[i] = {start, clock()};
      state[i] = 2;
      --remaining;
    };
    // Tests every op in flight; true when one completed.
    auto poll = [&] {
      bool completed = false;
      for (std::size_t k = 0; k < in_flight.size();) {
        int flag = 0;
        const int rc = MPI_Test(&in_flight[k].first.request, &flag, MPI_STATUS_IGNORE);
        const OpId id = in_flight[k].first.id;
        if (rc != MPI_SUCCESS)
          abort_job("error: rank " + std::to_string(w_.rank) + ": MPI reported an error in " +
                    describe(s_, id) + "; ending the job");
        if (!flag) {
          ++k;
          continue;
        }
        const engine::Op& op = s_.ops[id];
        const std::uint64_t bad = wrong_values(op, in_flight[k].first);
        checked_ += checked_values(op, in_flight[k].first);
        if (bad > 0) {
          wrong_ += bad;
          std::cerr << "error: rank " << w_.rank << ": data check failed in " << describe(s_, id)
                    << ": " << bad << " of " << checked_values(op, in_flight[k].first)
                    << " values wrong" << std::endl;
        }
        finish(id, in_flight[k].second);
        in_flight.erase(in_flight.begin() + static_cast<std::ptrdiff_t>(k));
        completed = true;
      }
      return completed;
    };
    auto ready = [&](OpId id) {
      const engine::Op& op = s_.ops[id];
      for (OpId d : s_.dependencies(op))
        if (state[local_index_.at(d)] != 2) return false;
      return op.kind != OpKind::collective ||
             group_ops_[op.group_or_peer][group_next[op.group_or_peer]] == id;
    };
    while (remaining > 0) {
      bool started = false;
      for (std::size_t st = 0; st < streams_.size(); ++st) {
        auto& ops = streams_[st];
        while (head[st] < ops.size() && state[local_index_.at(ops[head[st]])] == 2)
          ++head[st];
        if (head[st] == ops.size()) continue;
        const OpId id = ops[head[st]];
        if (state[local_index_.at(id)] != 0 || !ready(id)) continue;
        const engine::Op& op = s_.ops[id];
        started = true;
        if (op.kind == OpKind::collective) ++group_next[op.group_or_peer];
        if (fault_.rank == w_.rank && fault_.op == id) {
          if (fault_.kind == Fault::Kind::kill) std::raise(SIGKILL);
          finish(id, clock());  // skipped: its peers wait for it in vain
          continue;
        }
        const double start = clock();
        if (op.kind == OpKind::compute || op.kind == OpKind::copy) {
          state[local_index_.at(id)] = 1;
          work_.run(s_, op, [&poll] { poll(); });
          finish(id, start);
          continue;
        }
        const bool collective = op.kind == OpKind::collective;
        const int group = collective ? static_cast<int>(op.group_or_peer) : 0;
        try {
          in_flight.emplace_back(
              post_comm(
                  op, id, collective ? comms_[static_cast<std::size_t>(group)] : MPI_COMM_WORLD,
                  collective ? members_[static_cast<std::size_t>(group)] : 0,
                  collective ? static_cast<int>(s_.groups[op.group_or_peer].ranks.size()) : 2),
              start);
        } catch (const std::exception& e) {
          abort_job("error: rank " + std::to_string(w_.rank) + ": " + describe(s_, id) + ": " +
                    e.what() + "; ending the job");
        }
        state[local_index_.at(id)] = 1;
      }
      if (poll() || started) continue;
      if (in_flight.empty())
        abort_job("error: rank " + std::to_string(w_.rank) +
                  ": no op can start (a dependency cycle in the schedule?); ending the job");
      const double now = clock();
      for (const auto& [c, since] : in_flight)
        if (now - since > o_.op_timeout_s) watchdog(c.id, now - since, in_flight);
      std::this_thread::yield();
    }
  }

 private:
  [[noreturn]] void watchdog(OpId id, double waited,
                             const std::vector<std::pair<CommOp, double>>& in_flight) {
    std::ostringstream m;
    m << "error: watchdog: rank " << w_.rank << " has waited "
      << engine::format_number("%.1f", waited) << " s (--op-timeout "
      << engine::format_number("%g", o_.op_timeout_s) << ") on " << describe(s_, id)
      << ": a peer never reached the matching op (a mismatched schedule or a dead rank)";
    if (in_flight.size() > 1) {
      m << "; also in flight on this rank:";
      for (const auto& [c, since] : in_flight)
        if (c.id != id) m << " op " << c.id;
    }
    m << "; ending the job";
    abort_job(m.str());
  }

  const engine::Schedule& s_;
  World w_;
  const ExecuteOptions& o_;
  Fault fault_;
  double offset_;
  HostWork work_;
  std::vector<OpId> local_;
  std::unordered_map<OpId, std::size_t> local_index_;
  std::vector<std::vector<OpId>> streams_;
  std::vector<std::vector<OpId>> group_ops_;
  std::vector<MPI_Comm> comms_;
  std::vector<int> members_;
  std::uint64_t checked_ = 0, wrong_ = 0;
};

// Rank 0 assembles every rank's times: one OpTimes vector per run, indexed by OpId, shifted so
// the run starts at 0.
std::vector<std::vector<OpTimes>> gather_runs(const engine::Schedule& s, const World& w,
                                              const std::vector<OpId>& local,
                                              const std::vector<std::vector<OpTimes>>& runs) {
  std::vector<double> mine;
  for (const auto& run : runs)
    for (const OpTimes& t : run)
      mine.insert(mine.end(), {t.start_s, t.end_s});
  int count = static_cast<int>(mine.size());
  std::vector<int> counts(static_cast<std::size_t>(w.size)), displs(counts.size());
  MPI_Gather(&count, 1, MPI_INT, counts.data(), 1, MPI_INT, 0, MPI_COMM_WORLD);
  std::vector<double> all;
  if (w.rank == 0) {
    for (std::size_t r = 1; r < counts.size(); ++r)
      displs[r] = displs[r - 1] + counts[r - 1];
    all.resize(static_cast<std::size_t>(displs.back() + counts.back()));
  }
  MPI_Gatherv(mine.data(), count, MPI_DOUBLE, all.data(), counts.data(), displs.data(), MPI_DOUBLE,
              0, MPI_COMM_WORLD);
  std::vector<std::vector<OpTimes>> out;
  if (w.rank != 0) return out;
  (void)local;
  std::vector<std::vector<OpId>> per_rank(static_cast<std::size_t>(w.size));
  for (OpId id = 0; id < s.ops.size(); ++id)
    per_rank[s.ops[id].rank].push_back(id);
  out.assign(runs.size(), std::vector<OpTimes>(s.ops.size()));
  for (std::size_t r = 0; r < per_rank.size(); ++r) {
    const auto& ids = per_rank[r];
    for (std::size_t k = 0; k < runs.size(); ++k)
      for (std::size_t i = 0; i < ids.size(); ++i) {
        const std::size_t at = static_cast<std::size_t>(displs[r]) + 2 * (k * ids.size() + i);
        out[k][ids[i]] = {all[at], all[at + 1]};
      }
  }
  for (auto& run : out) {
    double origin = 1e300;
    for (const OpTimes& t : run)
      origin = std::min(origin, t.start_s);
    for (OpTimes& t : run)
      t = {t.start_s - origin, t.end_s - origin};
  }
  return out;
}

}  // namespace

int execute_mpi(const ExecuteOptions& o) {
  MpiSession session;
  const World w{session.rank(), session.size()};
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  const bool writer = w.rank == 0;
  auto fail = [&](int code, const std::string& message) {
    if (writer) std::cerr << "error: " << message << std::endl;
    return code;
  };

  // Load: every rank builds the same schedule (and the prediction, which rank 0 writes beside
  // the measurement).
  models::RunRequest request;
  request.scenario = o.scenario;
  request.overrides = o.overrides;
  request.every_rank = true;  // each MPI rank replays its own ops
  for (const auto& [path, flag] : {std::pair{o.json_out, "--json"}, {o.trace_out, "--trace"}})
    if (!path.empty()) request.outputs.emplace_back(path, flag);
  models::Prediction predicted;
  std::string load_error;
  int status = 0;
  Fault fault;
  try {
    fault = read_fault();
    predicted = models::predict(request);
  } catch (const std::exception& e) {
    load_error = e.what();
    status = kExitBadInput;
  }
  if (agree(status) != 0)
    return load_error.empty() ? kExitBadInput : fail(kExitBadInput, load_error);
  const engine::Schedule& s = predicted.output.built.schedule;

  const std::vector<std::string> hosts = host_names(w);
  if (const std::string m = launch_mismatch(predicted.scenario, s, w, hosts); !m.empty())
    return fail(kExitBadInput, o.scenario + ": launch does not match the cluster: " + m);
  std::uint64_t mine = fingerprint(s);
  std::vector<std::uint64_t> prints(static_cast<std::size_t>(w.size));
  MPI_Allgather(&mine, 1, MPI_UINT64_T, prints.data(), 1, MPI_UINT64_T, MPI_COMM_WORLD);
  for (int r = 1; r < w.size; ++r)
    if (prints[static_cast<std::size_t>(r)] != prints[0])
      return fail(kExitBadInput, "rank " + std::to_string(r) +
                                     " built a different schedule than rank 0 (the ranks were "
                                     "given different scenarios or --set values); nothing ran");

  const std::vector<double> offsets = clock_offsets(w);
  RankRunner runner(s, w, o, fault, offsets[static_cast<std::size_t>(w.rank)]);
  std::vector<std::vector<OpTimes>> runs;
  for (int k = 0; k < o.warmup + o.iterations; ++k) {
    runner.barrier("waits to start run " + std::to_string(k + 1));
    std::vector<OpTimes> times;
    runner.run(times);
    if (k >= o.warmup) runs.push_back(std::move(times));
  }
  runner.barrier("finished its ops and waits at the end of the last run");

  std::uint64_t totals[2] = {runner.checked(), runner.wrong()};
  MPI_Allreduce(MPI_IN_PLACE, totals, 2, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
  auto all_runs = gather_runs(s, w, runner.local_ops(), runs);
  if (totals[1] > 0)
    return fail(kExitFailure, "data check failed: " + std::to_string(totals[1]) + " of " +
                                  std::to_string(totals[0]) +
                                  " values wrong (the ops are named above); no result written");
  if (!writer) return 0;

  Execution e;
  ExecutionInfo& i = e.info;
  i.backend = "mpi";
  i.device = "cpu (Eigen fp32 GEMM tiles, one process per rank)";
  i.ranks = static_cast<std::uint32_t>(w.size);
  i.hosts = static_cast<std::uint32_t>(std::set<std::string>(hosts.begin(), hosts.end()).size());
  i.iterations = o.iterations;
  i.warmup = o.warmup;
  i.work_scale = o.work_scale;
  i.compute_dtype = "fp32";
  i.op_timeout_s = o.op_timeout_s;
  i.clock_offsets_s = offsets;
  i.values_checked = totals[0];
  i.values_wrong = totals[1];
  std::vector<std::size_t> order(all_runs.size());
  for (std::size_t k = 0; k < all_runs.size(); ++k) {
    double end = 0;
    for (const OpTimes& t : all_runs[k])
      end = std::max(end, t.end_s);
    i.run_makespans_s.push_back(end);
    order[k] = k;
  }
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return i.run_makespans_s[a] < i.run_makespans_s[b];
  });
  i.representative_run = order[order.size() / 2];
  e.ops = all_runs[i.representative_run];
  try {
    write_execution(predicted, e, o.json_out, o.trace_out);
  } catch (const std::exception& ex) {
    return fail(kExitFailure, ex.what());
  }
  const double measured = i.run_makespans_s[i.representative_run];
  const double predicted_s = predicted.output.timeline.makespan.seconds();
  std::cout << "executed " << predicted.scenario.name << " on " << w.size << " ranks (" << i.hosts
            << " host(s)), " << o.iterations << " run(s) after " << o.warmup
            << " warm-up: schedule makespan measured "
            << engine::format_number("%.4g", measured * 1e3) << " ms (median), predicted "
            << engine::format_number("%.4g", predicted_s * 1e3) << " ms, error "
            << engine::format_number("%+.1f", (predicted_s / measured - 1) * 100) << " %; "
            << totals[0] << " values checked, 0 wrong\n";
  if (!o.json_out.empty()) std::cout << "  measured result JSON: " << o.json_out << "\n";
  if (!o.trace_out.empty()) std::cout << "  measured trace: " << o.trace_out << "\n";
  return 0;
}

}  // namespace clustersim::calibrate
