#include "engine/simulator.hpp"

#include <algorithm>
#include <bit>
#include <future>
#include <optional>
#include <string>

#include "engine/call_plans.hpp"
#include "engine/heap.hpp"
#include "engine/huge_pages.hpp"
#include "engine/network/op_transfer.hpp"
#include "engine/op_end_queue.hpp"
#include "engine/rendezvous.hpp"
#include "engine/replica_images.hpp"
#include "engine/sm_sharing.hpp"

namespace clustersim::engine {

namespace {

// The state of one run. Streams are FIFO: an op starts when it heads its stream, the stream is
// idle and its dependencies are done; a communication op then waits on its stream (as an NCCL
// kernel does) until every peer has arrived and the network has carried the transfer.
class Run {
  // Per instance: members arrived so far and members expected, side by side so that an
  // arrival reads one cache line (the instances' table, 12 bytes each, is another), and what
  // fill_timeline() copies to its members: when it launched and ended, and its plan.
  struct InstanceState {
    Time launch;
    Time end;
    std::uint32_t arrived;
    std::uint32_t expected;
    std::uint32_t call;  // its plan in calls_
    std::uint16_t sms;   // SMs its kernels hold on each member's GPU while it moves data
  };

 public:
  Run(const Schedule& s, const Topology& topo, NetworkModel& net, const ComputeModel& compute,
      const SimulationOptions& options)
      : s_(s), topo_(topo), net_(net), options_(options), calls_(s, topo, options.algorithms) {
    // The matching and the loop's set-up each read every op (0.6 GB on GPT-3 175B) and need
    // nothing of each other, so the set-up runs on another thread meanwhile. Each op's work word
    // is written by one of them: a communication op's instance by the matching, a GPU op's
    // duration index by the set-up.
    reserve_huge(work_, s.ops.size());
    work_.resize(s.ops.size());
    auto set_up = std::async(std::launch::async, [this, &compute] { set_up_loop(compute); });
    try {
      rendezvous_ = match_communication(s, work_, [&options](double f) {
        if (options.cancel != nullptr && options.cancel->load(std::memory_order_relaxed))
          throw Cancelled("simulation cancelled while matching");
        if (options.matching_progress) options.matching_progress(f);
      });
    } catch (...) {
      set_up.wait();  // the matching's error comes first, as when the two ran one after the other
      throw;
    }
    set_up.wait();
    if (s.num_ranks > topo.num_gpus())
      throw SimulationError("simulate: the schedule has " + std::to_string(s.num_ranks) +
                            " ranks but the topology only " + std::to_string(topo.num_gpus()) +
                            " GPUs");
    set_up.get();  // its error, if any
    sharing_.emplace(compute, s.kernels, lists_, s.num_ranks, num_streams_);
    if (sharing_->enabled()) simulated_members();
    reserve_huge(instances_, rendezvous_.instances.size());
    // An instance's end is Time::max() until its transfer ends (check_image reads it).
    for (const auto& instance : rendezvous_.instances)
      instances_.push_back({Time::zero(), Time::max(), 0, instance.size, kNone, 0});
    if (options.carry_replica_images && !s.mirror.empty()) {
      try {
        images_.emplace(s);
      } catch (const std::invalid_argument& e) {
        throw FoldNotExact(std::string("simulate: ") + e.what());
      }
      if (images_->replicas() < 2)
        images_.reset();
      else
        plan_images();
    }
    if (options.record_link_rates)
      net_.set_link_rate_sink([this](LinkId l, Time t, double rate) {
        timeline_.link_rates.push_back({l, t, rate});
      });
  }

  // A checked fold: every instance's call is planned before the loop (as launch() would plan
  // it), so that which calls' images must be carried is known before the first transfer
  // (images_to_carry, engine/replica_images.hpp).
  void plan_images() {
    std::vector<ReplicaCall> calls;
    for (std::uint32_t inst = 0; inst < rendezvous_.instances.size(); ++inst) {
      const Rendezvous::Instance& instance = rendezvous_.instances[inst];
      const Op op = s_.ops[rendezvous_.ops[instance.ops_begin]];
      const std::uint32_t call = calls_.plan_for(rendezvous_, instance, op);
      instances_[inst].call = call;
      if (call < calls.size()) continue;
      calls.resize(call + 1);
      ReplicaCall& c = calls[call];
      c.plan = calls_[call].first;
      c.bytes = static_cast<double>(op.bytes);
      c.local = instance.group == kNone || images_->local(instance.group);
      if (c.local)
        for (std::uint32_t k = 1; k < images_->replicas(); ++k)
          c.images.push_back(&calls_.image_plan(call, k, op, *images_));
    }
    carry_images_ = images_to_carry(calls, topo_);
  }

  // What the loop needs of the ops alone: each op's loop word, each GPU op's work word (in work_)
  // and duration, the streams' chains and the successor lists.
  void set_up_loop(const ComputeModel& compute) {
    const std::size_t n = s_.ops.size();
    // Each op's start only where a caller asked for it (traces, the GUI, Python): 0.12 GB less
    // on GPT-3 175B. The end array holds each op's loop word until the op ends.
    record_starts_ = options_.record_starts;
    if (record_starts_) {
      reserve_huge(timeline_.start, n);
      timeline_.start.resize(n);
    }
    reserve_huge(timeline_.end, n);
    timeline_.end.resize(n);
    // Each distinct kernel list is costed once, not once per op that launches it; an op's
    // duration is an index into this table (its list's, or one of its own appended).
    durations_ = compute.kernel_list_durations(s_.kernels);
    const std::size_t lists = lists_ = durations_.size();
    // An op's work index shares a word with kOnGpu (fill_timeline).
    if (n + lists >= kOnGpu)
      throw SimulationError("simulate: more than 2^31 ops and kernel lists are not supported");
    if (s_.deps.size() >= 0xffffffffu)
      throw SimulationError("simulate: more than 2^32 - 1 dependencies are not supported");
    num_streams_ = std::max<std::size_t>(1, s_.stream_names.size());
    pack_streams();
    std::vector<Time>& loop = timeline_.end;
    // One pass over the ops sets each op's loop word and a GPU op's work and counts successors;
    // link_lists() makes one more. Neither reads a group or a peer.
    const OpStore::Reader ops = s_.ops.reader_without_peers();
    for (OpId id = 0; id < n; ++id) {
      const Op op = ops[id];
      const std::uint32_t stream = stream_index(op);
      for (OpId d : s_.dependencies(op))
        loop[d] = plus(loop[d], kSuccOne);  // counts d's successors
      const bool on_gpu =
          op.kind == OpKind::compute || (op.kind == OpKind::copy && !is_host_copy(op));
      if (op.deps_count > max_deps_) too_many_dependencies(op);
      loop[id] = loop_word(link_of(loop[id]), stream | (on_gpu ? gpu_bit_ : 0u) |
                                                  std::uint32_t{op.deps_count} * dep_one_);
      if (on_gpu) {
        if (op.stream < 64)
          gpu_streams_ |= std::uint64_t{1} << op.stream;
        else
          gpu_streams_ = ~std::uint64_t{0};
        std::uint32_t work = 0;
        if (op.kind == OpKind::compute && op.kernels < lists) {
          work = op.kernels;
        } else {
          work = static_cast<std::uint32_t>(durations_.size());
          durations_.push_back(compute.duration(op, s_.flops(op)));
        }
        if (durations_[work] >= Time::end_of_clock())
          clock_overflow("'" + s_.label(op) + "' alone lasts longer than the clock holds");
        work_[id] = work | kOnGpu;
      }
    }
    link_lists();
  }

  // The loop word's packed half: the stream index in the low bits, as many as the streams of all
  // ranks need, the GPU flag above them, the unfinished dependencies in the bits left.
  void pack_streams() {
    const std::uint64_t slots = std::uint64_t{s_.num_ranks} * num_streams_;
    const int bits = std::max(1, static_cast<int>(std::bit_width(slots - 1)));
    if (bits > 24)
      throw SimulationError("simulate: " + std::to_string(s_.num_ranks) + " ranks × " +
                            std::to_string(num_streams_) +
                            " streams are more streams than the simulator tracks (2^24)");
    stream_mask_ = (std::uint32_t{1} << bits) - 1;
    gpu_bit_ = std::uint32_t{1} << bits;
    dep_one_ = gpu_bit_ << 1;
    max_deps_ = 0xffffffffu / dep_one_;
  }

  [[noreturn]] void too_many_dependencies(const Op& op) const {
    throw SimulationError("simulate: '" + s_.label(op) + "' on rank " + std::to_string(op.rank) +
                          " has " + std::to_string(op.deps_count) + " dependencies; with " +
                          std::to_string(s_.num_ranks) + " ranks × " +
                          std::to_string(num_streams_) + " streams an op may have at most " +
                          std::to_string(max_deps_));
  }

  [[noreturn]] void clock_overflow(const std::string& what) const {
    throw ClockOverflow("simulate: the simulated clock (64-bit picoseconds) would overflow at " +
                        std::to_string(now_.seconds()) + " s: " + what +
                        " (about 106 days); the iteration is too long to simulate: check the "
                        "figures that make it so slow (a tiny bandwidth, peak or efficiency, a "
                        "huge model or sequence)");
  }

  Timeline run() {
    for (std::uint32_t st = 0; st < cursor_.size(); ++st)
      try_start(st);
    std::vector<TransferId> completed;
    const std::uint64_t report_every = 1u << 16;
    while (true) {
      // An op's end that SM sharing moved leaves its old event behind: dropped here, uncounted.
      if (stale_ > 0) drop_stale_events();
      const Time tn = net_.next_event_time();
      const Time te = events_.next_time();
      if (tn == Time::max() && te == Time::max()) break;
      ++timeline_.events;
      if (std::min(tn, te) >= Time::end_of_clock())
        clock_overflow(tn <= te ? "a transfer would end after the clock's last instant"
                                : "'" + s_.label(s_.ops[events_.front().op]) +
                                      "' would end after the clock's last instant");
      if (tn <= te) {
        now_ = tn;
        completed.clear();
        net_.advance(tn, completed);
        // Sorted: an instance's own transfer comes before its images (kImage set).
        for (TransferId t : completed) {
          if (t & kImage)
            check_image(t & ~kImage);
          else
            finish_instance(t);
        }
      } else {
        // The end stays at the queue's front while it is processed (the ends it starts queue
        // behind it), and is popped after.
        const OpEndQueue::End e = events_.front();
        now_ = te;
        sharing_->finish(e.stream, rank_of(e.stream), now_);
        finish(e.op, e.stream);
        events_.pop_front();
      }
      if (finished_ops_ / report_every != reported_ / report_every) {
        reported_ = finished_ops_;
        if (options_.cancel != nullptr && options_.cancel->load(std::memory_order_relaxed))
          throw Cancelled("simulation cancelled");
        if (options_.progress)
          options_.progress(static_cast<double>(finished_ops_) /
                            static_cast<double>(s_.ops.size()));
      }
    }
    if (finished_ops_ != s_.ops.size()) report_deadlock();
    timeline_.makespan = now_;
    fill_timeline();
    timeline_.link_bytes = net_.link_bytes();
    return std::move(timeline_);
  }

 private:
  std::uint32_t stream_index(const Op& op) const {
    return op.rank * static_cast<std::uint32_t>(num_streams_) + op.stream;
  }

  // Each stream's ops in OpId order (its issue order), as a chain: an op's loop word names the
  // next, and cursor_ each stream's head; and each op's successors, in OpId order. Few ops have
  // successors (0.79 M of GPT-3's 15 M: streams order the rest): their loop word names their
  // index among them instead (| kHasSucc), which gives their next op and their list. Both are
  // filled from the back in one pass over the ops.
  void link_lists() {
    const std::size_t n = s_.ops.size();
    std::vector<Time>& loop = timeline_.end;
    std::uint32_t sum = 0;  // below 2^32 (the constructor checks)
    for (std::size_t i = 0; i < n; ++i) {
      const std::uint32_t count = link_of(loop[i]);
      if (count == 0) continue;
      loop[i] =
          loop_word(kHasSucc | static_cast<std::uint32_t>(succ_begin_.size()), packed_of(loop[i]));
      succ_begin_.push_back(sum);
      sum += count;
    }
    succ_begin_.push_back(sum);
    reserve_huge(succ_, sum);
    succ_.resize(sum);
    std::vector<std::uint32_t> fill(succ_begin_.begin() + 1, succ_begin_.end());  // each list's end
    reserve_huge(owner_next_, succ_begin_.size() - 1);
    owner_next_.resize(succ_begin_.size() - 1);
    cursor_.assign(std::size_t{s_.num_ranks} * num_streams_, kEndOfStream);
    const OpStore::Reader ops = s_.ops.reader_without_peers();
    for (OpId id = static_cast<OpId>(n); id-- > 0;) {
      const Time word = loop[id];
      std::uint32_t& head = cursor_[packed_of(word) & stream_mask_];
      if (const std::uint32_t h = link_of(word); h & kHasSucc)
        owner_next_[h & ~kHasSucc] = head;
      else
        loop[id] = loop_word(head, packed_of(word));
      head = id;
      const auto deps = s_.dependencies(ops[id]);
      for (auto d = deps.rbegin(); d != deps.rend(); ++d)
        succ_[--fill[link_of(loop[*d]) & ~kHasSucc]] = id;
    }
    busy_.assign(cursor_.size(), 0);  // cursor_ now holds each stream's first op
  }

  void try_start(std::uint32_t st) {
    const OpId id = cursor_[st];
    if (busy_[st] || id == kEndOfStream) return;
    const std::uint32_t packed = packed_of(timeline_.end[id]);
    if (packed >= dep_one_) return;  // dependencies left
    busy_[st] = 1;
    if (record_starts_) timeline_.start[id] = now_;
    if (packed & gpu_bit_) {
      const std::uint32_t work = work_[id] & ~kOnGpu;
      const Time end = sharing_->start(rank_of(st), st, id, work, durations_[work], now_);
      events_.push(end, {id, st});
      return;
    }
    const std::uint32_t inst = work_[id];
    InstanceState& a = instances_[inst];
    if (++a.arrived == a.expected) launch(inst, a, s_.ops[id]);
  }

  // Every member has arrived: hand the transfer to the network model. The launch time and the
  // plan are kept per instance (this record's cache line is the one just read) and copied to
  // the members' timeline entries at the end: a write per member here was a cache miss each
  // (the members are ops of different ranks), half of try_start's time at 16,384 GPUs.
  void launch(std::uint32_t inst, InstanceState& a, const Op& op) {
    a.launch = now_;
    if (a.call == kNone) a.call = calls_.plan_for(rendezvous_, rendezvous_.instances[inst], op);
    a.sms = sms_held_by(a, op);
    if (a.sms > 0) hold_sms(rendezvous_.instances[inst], a.sms, op);
    const auto bytes = static_cast<double>(op.bytes);
    net_.start(inst, *calls_[a.call].first, bytes, now_);
    if (images_ && carry_images_[a.call])
      for (std::uint32_t k = 1; k < images_->replicas(); ++k)
        net_.start(inst | kImage, calls_.image_plan(a.call, k, op, *images_), bytes, now_);
  }

  // An image of instance `inst`'s transfer ended now: the instance's own must have ended now too
  // (it is finished first when both end at once), or the replicas no longer keep step.
  void check_image(std::uint32_t inst) const {
    const Time end = instances_[inst].end;
    if (end == now_) return;
    const Op& op = s_.ops[rendezvous_.ops[rendezvous_.instances[inst].ops_begin]];
    throw FoldNotExact(
        "simulate: the folded run is not the whole run: another data-parallel replica's copy "
        "of rank " +
        std::to_string(op.rank) + "'s '" + s_.label(op) + "' ended at " +
        std::to_string(now_.seconds()) + " s, rank " + std::to_string(op.rank) + "'s " +
        (end == Time::max() ? std::string("had not ended yet")
                            : "at " + std::to_string(end.seconds()) + " s") +
        ": the replicas' traffic met different links or contention");
  }

  // While a collective moves data, its NCCL kernel holds one SM per channel on every member's
  // GPU; the compute ops running there change pace (engine/sm_sharing.hpp). 0 where nothing can
  // run beside it: host copies (copy engines, no SMs), and a collective on the only stream that
  // runs GPU work (a tensor-parallel collective on `compute`), which has the GPU to itself.
  std::uint16_t sms_held_by(const InstanceState& a, const Op& op) const {
    if (!sharing_->enabled() || is_host_copy(op)) return 0;
    if (op.stream < 64 && gpu_streams_ == std::uint64_t{1} << op.stream) return 0;
    return calls_[a.call].first->channels_at(static_cast<double>(op.bytes));
  }

  // `sms` more SMs held (fewer if negative) on the GPU of every simulated member of `instance`.
  void hold_sms(const Rendezvous::Instance& instance, int sms, const Op& op) {
    const auto moved = [this](std::uint32_t stream, OpId id, Time end) {
      push_moved_end(stream, id, end);
    };
    if (instance.group != kNone) {
      const GroupId g = instance.group;
      for (std::uint32_t i = members_begin_[g]; i < members_begin_[g + 1]; ++i)
        sharing_->change(members_[i], sms, now_, moved);
    } else {
      sharing_->change(op.rank, sms, now_, moved);
      sharing_->change(op.group_or_peer, sms, now_, moved);
    }
  }

  // An op's new end: its previous one stays queued, to be dropped when it comes up. Out of line
  // (rare), so that the loop's own pop and push stay inlined.
  [[gnu::noinline]] void push_moved_end(std::uint32_t stream, OpId id, Time end) {
    events_.push(end, {id, stream});
    ++stale_;
  }

  // Drops the queue's leading events that are no longer an op's end (SM sharing moved it).
  [[gnu::noinline]] void drop_stale_events() {
    while (stale_ > 0 && !events_.empty()) {
      const OpEndQueue::End e = events_.front();
      if (sharing_->current(e.stream, e.op, events_.front_time())) return;
      events_.pop_front();
      --stale_;
    }
  }

  // Each group's simulated members (a folded group's mirrored ranks run nothing to slow down).
  void simulated_members() {
    members_begin_.assign(1, 0);
    for (const ProcessGroup& g : s_.groups) {
      for (Rank r : g.ranks)
        if (s_.mirror.empty() || s_.mirror[r] == r) members_.push_back(r);
      members_begin_.push_back(static_cast<std::uint32_t>(members_.size()));
    }
  }

  std::uint32_t rank_of(std::uint32_t stream) const {
    return stream / static_cast<std::uint32_t>(num_streams_);
  }

  void finish_instance(std::uint32_t inst) {
    instances_[inst].end = now_;
    const auto& instance = rendezvous_.instances[inst];
    if (const int sms = instances_[inst].sms; sms > 0)
      hold_sms(instance, -sms, s_.ops[rendezvous_.ops[instance.ops_begin]]);
    for (std::uint32_t i = 0; i < instance.size; ++i) {
      const OpId id = rendezvous_.ops[instance.ops_begin + i];
      finish(id, packed_of(timeline_.end[id]) & stream_mask_);
    }
  }

  // Op `id`, on stream `st`, ends now: its loop word becomes its end.
  void finish(OpId id, std::uint32_t st) {
    Time& entry = timeline_.end[id];
    const std::uint32_t h = link_of(entry);
    entry = now_;
    ++finished_ops_;
    busy_[st] = 0;
    if (h & kHasSucc) {
      const std::uint32_t k = h & ~kHasSucc;
      cursor_[st] = owner_next_[k];
      for (std::uint32_t i = succ_begin_[k], e = succ_begin_[k + 1]; i < e; ++i) {
        Time& next = timeline_.end[succ_[i]];
        next = plus(next, -std::int64_t{dep_one_});
        if (const std::uint32_t packed = packed_of(next); packed < dep_one_)
          try_start(packed & stream_mask_);
      }
    } else {
      cursor_[st] = h;
    }
    try_start(st);
  }

  // Every op has run; each end is in place. Its launch, algorithm, protocol and channels follow,
  // in one sequential pass instead of a cache miss per op and field in the loop: a GPU op
  // launched its full-GPU duration before its end unless SM sharing moved it (its start is then
  // on record); a communication op when its instance did. The loop's lists go first.
  void fill_timeline() {
    release(succ_);
    release(rendezvous_.ops);
    release(rendezvous_.instances);
    release(succ_begin_);
    release(owner_next_);
    trim_heap();
    const std::size_t n = s_.ops.size();
    // The work words move into the launch array, each into the slot its op's launch then takes
    // (written over below), so that work_ is freed before the plan arrays are allocated.
    reserve_huge(timeline_.launch, n);
    timeline_.launch.resize(n);
    for (std::size_t id = 0; id < n; ++id)
      timeline_.launch[id] = Time::from_ps(work_[id]);
    release(work_);
    reserve_huge(timeline_.algorithm, n);
    reserve_huge(timeline_.protocol, n);
    reserve_huge(timeline_.channels, n);
    timeline_.algorithm.assign(n, Algorithm::automatic);
    timeline_.protocol.assign(n, Protocol::simple);
    timeline_.channels.assign(n, 0);
    timeline_.sm_sharing_delay = sharing_->take_delays();
    for (std::size_t id = 0; id < n; ++id) {
      const auto w = static_cast<std::uint32_t>(timeline_.launch[id].ps());
      if (w & kOnGpu) {
        // unless SM sharing moved it (below)
        timeline_.launch[id] = timeline_.end[id] - durations_[w & ~kOnGpu];
        continue;
      }
      const InstanceState& a = instances_[w];
      timeline_.launch[id] = a.launch;
      const auto [plan, algorithm] = calls_[a.call];
      timeline_.algorithm[id] = algorithm;
      timeline_.protocol[id] = plan->protocol;
      // Sends in parts take their channels by size: only they need the op's bytes.
      timeline_.channels[id] = plan->phases.empty() || !plan->phases[0].pipeline.send_recv.on
                                   ? plan->channels
                                   : plan->channels_at(static_cast<double>(s_.ops[id].bytes));
    }
    // One entry per op whose end moved, in the order they ended: written over, not sorted.
    for (const auto& [id, start] : sharing_->take_moved_starts())
      timeline_.launch[id] = start;
  }

  [[noreturn]] void report_deadlock() const {
    std::string msg = "simulate: deadlock at t=" + std::to_string(now_.seconds()) + " s; " +
                      std::to_string(s_.ops.size() - finished_ops_) + " ops never ran. Blocked:";
    // Each rank's first blocked stream before any rank's others: a cycle runs across ranks, and
    // listing one rank's streams first would hide its other end.
    std::vector<OpId> blocked;
    std::vector<bool> rank_listed(s_.num_ranks, false), stream_listed(cursor_.size(), false);
    for (std::uint32_t st = 0; st < cursor_.size(); ++st)
      if (const OpId id = cursor_[st]; id != kEndOfStream && !rank_listed[s_.ops[id].rank]) {
        rank_listed[s_.ops[id].rank] = true;
        stream_listed[st] = true;
        blocked.push_back(id);
      }
    for (std::uint32_t st = 0; st < cursor_.size(); ++st)
      if (cursor_[st] != kEndOfStream && !stream_listed[st]) blocked.push_back(cursor_[st]);
    constexpr std::size_t kShown = 12;
    for (std::size_t k = 0; k < std::min(blocked.size(), kShown); ++k) {
      const OpId id = blocked[k];
      const Op& op = s_.ops[id];
      msg += "\n  rank " + std::to_string(op.rank) + " stream '" + s_.stream_names[op.stream] +
             "' at '" + s_.label(op) + "': ";
      if (const std::uint32_t deps = packed_of(timeline_.end[id]) / dep_one_; deps != 0) {
        msg += "waits on " + std::to_string(deps) + " dependencies";
      } else {
        const auto inst = work_[id];
        msg += std::to_string(instances_[inst].arrived) + " of " +
               std::to_string(rendezvous_.instances[inst].size) + " peers arrived";
      }
    }
    if (blocked.size() > kShown)
      msg += "\n  and " + std::to_string(blocked.size() - kShown) + " more blocked streams";
    throw SimulationError(msg);
  }

  const Schedule& s_;
  const Topology& topo_;
  NetworkModel& net_;
  const SimulationOptions& options_;
  Rendezvous rendezvous_;
  CallPlans calls_;  // each instance's plan (InstanceState::call)
  Timeline timeline_;
  Time now_ = Time::zero();

  // What the loop keeps per op, 12 bytes (with the start and the stream list, 24 until 3 Dec
  // 2026: −0.18 GB on GPT-3's 15 M ops). Until an op ends, its entry of the timeline's end array
  // is its loop word, which then takes its end, its final value. The word's high half, its link:
  // the next op on its stream (kEndOfStream after the last), or for an op with successors
  // kHasSucc | its index into succ_begin_ and owner_next_ (link_lists; the constructor counts
  // successors there first). Its low half, `packed`: its stream index (& stream_mask_), |
  // gpu_bit_ for GPU work, + dep_one_ per dependency not yet finished (pack_streams): the op is
  // ready when packed < dep_one_. work_ holds its work word: GPU work its index into durations_ |
  // kOnGpu, communication its instance.
  static std::uint32_t packed_of(Time word) { return static_cast<std::uint32_t>(word.ps()); }
  static std::uint32_t link_of(Time word) {
    return static_cast<std::uint32_t>(static_cast<std::uint64_t>(word.ps()) >> 32);
  }
  static Time loop_word(std::uint32_t link, std::uint32_t packed) {
    return Time::from_ps(static_cast<std::int64_t>(std::uint64_t{link} << 32 | packed));
  }
  // In unsigned arithmetic: no borrow or carry crosses into the other half where it is used.
  static Time plus(Time word, std::int64_t delta) {
    return Time::from_ps(static_cast<std::int64_t>(static_cast<std::uint64_t>(word.ps()) +
                                                   static_cast<std::uint64_t>(delta)));
  }
  static constexpr std::int64_t kSuccOne = std::int64_t{1} << 32;  // one successor more
  static constexpr std::uint32_t kHasSucc = 0x80000000u;           // ids and indices are below 2^31
  static constexpr std::uint32_t kEndOfStream = 0x7fffffffu;       // no op has this id (2^31 - 1)
  std::uint32_t stream_mask_ = 0;
  std::uint32_t gpu_bit_ = 0;
  std::uint32_t dep_one_ = 0;
  std::uint32_t max_deps_ = 0;  // the most dependencies packed holds
  // A GPU op's flag in its work word beside the work index (below 2^31, the constructor checks)
  static constexpr std::uint32_t kOnGpu = 0x80000000u;
  bool record_starts_ = true;
  std::vector<std::uint32_t> work_;
  std::vector<Time> durations_;
  std::vector<OpId> succ_;                 // the successors of the ops that have any, op after op
  std::vector<std::uint32_t> succ_begin_;  // per such op, into succ_ (+1 past the end)
  std::vector<OpId> owner_next_;           // per such op, the next op on its stream
  std::size_t num_streams_ = 1;
  std::size_t lists_ = 0;     // kernel lists costed, the first entries of durations_
  std::vector<OpId> cursor_;  // per stream, the op at its head (kEndOfStream when none is left)
  std::vector<std::uint8_t> busy_;
  std::vector<InstanceState> instances_;
  std::optional<SmSharing> sharing_;        // set once the kernel lists are costed
  std::optional<ReplicaImages> images_;     // SimulationOptions::carry_replica_images
  std::vector<std::uint8_t> carry_images_;  // per call: its images are started (plan_images)
  // An image's transfer id: its instance's | kImage (instances are below 2^31, as ops are).
  static constexpr TransferId kImage = 0x80000000u;
  std::vector<Rank> members_;                 // simulated members, group after group
  std::vector<std::uint32_t> members_begin_;  // into members_, per GroupId (+1 past the end)
  std::size_t stale_ = 0;                     // moved ends still queued
  std::uint64_t gpu_streams_ = 0;             // bit s: some rank runs GPU work on stream s
  // Each running GPU op's end, with its stream: the stale-event check at each loop top reads the
  // stream here instead of in the op's state (a cache miss for each stale event dropped).
  OpEndQueue events_;
  std::size_t finished_ops_ = 0;
  std::size_t reported_ = 0;
};

}  // namespace

Timeline simulate(const Schedule& schedule, const Topology& topology, NetworkModel& network,
                  const ComputeModel& compute, const SimulationOptions& options) {
  Run run(schedule, topology, network, compute, options);
  return run.run();
}

}  // namespace clustersim::engine
