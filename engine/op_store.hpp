// The schedule's ops (Schedule::ops), held once where a data-parallel replica repeats them.
//
// Every data-parallel replica issues the ops its counterpart in replica 0 issued, with its own
// rank, groups, peers and dependencies (ScheduleBuilder::stamp). Stored as records, replicas'
// copies were most of a large plan's memory: 44.1 M ops × 40 bytes = 1.76 GB for a 1T model on
// 3,072 GPUs, of which a sixth is replica 0's. Here a stamped run of ids reads the records of
// the ops it copies and puts in its own rank, dependency offset, groups and peers as each op is
// read; only the records of ops built one by one are held.
//
// So an op is read by value (a 40-byte copy), through operator[], the iterators or a Reader;
// `const Op& op = ops[id]` binds the copy, and nothing may keep a pointer into the store.
// Reading an op of a stamped run costs a page-table lookup of its run (once per run for a
// Reader's pass) and, for a collective or a send or receive, a search of the run's few groups or
// peers. A store without stamps reads its records directly.
#pragma once

#include <algorithm>
#include <compare>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <utility>
#include <vector>

#include "engine/huge_pages.hpp"
#include "engine/op.hpp"

namespace clustersim::engine {

class OpStore {
 public:
  // What a stamped run puts into each op it reads.
  struct Stamp {
    Rank rank = 0;                 // the rank that issues the copies
    std::uint32_t deps_shift = 0;  // added to the source's deps_begin (modulo 2^32)
    using Map = std::vector<std::pair<std::uint32_t, std::uint32_t>>;  // (from, to), by from
    Map groups;                                                        // a collective's group
    Map peers;                                                         // a send's or receive's peer
  };

  OpStore() = default;
  // Every op a record (implicit: trace assembly assigns its array, `s.ops = std::move(ops)`).
  OpStore(std::vector<Op> ops);

  std::size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  Op operator[](OpId id) const { return runs_.empty() ? records_[id] : read(id, run_of(id)); }
  Op front() const { return (*this)[0]; }
  Op back() const { return (*this)[static_cast<OpId>(size_ - 1)]; }

  void reserve(std::size_t n) { reserve_huge(records_, n); }
  void push_back(const Op& op);
  // Appends `count` ops that read as ops [first, first + count), as changed by `stamp`; those
  // must be records held in one run (ops built one by one, not stamped). Returns false and
  // appends nothing where they are not: the caller then appends copies as records.
  bool append_stamp(OpId first, std::size_t count, Stamp stamp);
  // `op` as a run stamped with `s` reads it.
  static Op stamped(const Stamp& s, Op op);
  // Ops held as records (size() minus the stamped ones).
  std::size_t records() const { return records_.size(); }

  // Calls f(id, op) for every op that is not a compute op, in id order. A stamped run's compute
  // ops are skipped unread (its records' communication and copy ops are indexed), so a pass that
  // wants only these reads a fraction of the store: the matching (engine/rendezvous.cpp).
  // kMapPeers false: as reader_without_peers() reads them (a stamped op keeps its source's group
  // or peer), for a pass that reads a group only for the few ops it keeps (`ops[id]` then).
  template <bool kMapPeers = true, class F>
  void for_each_non_compute(F&& f) const;

  // A run of consecutive ids [begin, end) as the store holds it. Stamped: the ops read as the
  // records [first_record, first_record + (end - begin)) do, with `rank` and their own
  // dependencies, groups and peers; every other field (kind, name, category, FLOPs, bytes) is
  // the record's, so a pass that sums those can sum each distinct record range once
  // (models/metrics.cpp). Not stamped: the records are read as they are, ranks their own.
  struct RunView {
    OpId begin = 0, end = 0;
    std::uint32_t first_record = 0;
    bool stamped = false;
    Rank rank = 0;  // the stamped run's
  };
  // Calls f(const RunView&) for every run, in id order (one run where nothing is stamped).
  template <class F>
  void for_each_run(F&& f) const;

  class Reader;
  Reader reader() const;
  // A Reader for passes that never read a communication op's group or peer: a stamped op keeps
  // its source's there (its rank and dependencies are its own), which saves the search of its
  // run's map on every collective, send and receive read (the simulator's set-up).
  Reader reader_without_peers() const;
  class const_iterator;
  const_iterator begin() const;
  const_iterator end() const;

 private:
  // A run of consecutive ids: records from `record` on, read as they are (stamp kNone) or
  // through stamps_[stamp].
  struct Run {
    OpId begin = 0;
    std::uint32_t record = 0;
    std::uint32_t stamp = kNone;
  };
  static constexpr int kPageBits = 10;

  std::size_t run_of(OpId id) const;
  OpId run_end(std::size_t run) const {
    return run + 1 < runs_.size() ? runs_[run + 1].begin : static_cast<OpId>(size_);
  }
  Op read(OpId id, std::size_t run) const;
  Op read_without_peer(OpId id, std::size_t run) const;
  // `op` with the rank and dependency offset `s` puts in (its group or peer left as it is).
  static Op stamped_rank_and_deps(const Stamp& s, Op op);
  // A collective's group or a send's or receive's peer, as stamped by `s`.
  static std::uint32_t mapped(const Stamp& s, const Op& op);
  void grow_pages();

  std::vector<Op> records_;
  std::vector<std::uint32_t> non_compute_;  // the records that are not compute ops, ascending
  std::vector<Run> runs_;  // in id order; empty while every op is the record at its own index
  std::vector<Stamp> stamps_;
  std::vector<std::uint32_t> pages_;  // per 2^kPageBits ids: the run holding the page's first
  std::size_t size_ = 0;
};

// Reads ops near the last one read (in id order, or backwards) without looking up their run
// each time: what a pass over the ops uses. Not shared between threads.
class OpStore::Reader {
 public:
  Reader() = default;
  explicit Reader(const OpStore& store, bool map_peers = true)
      : store_(&store), map_peers_(map_peers) {}
  // Inlined where passes read it (GCC kept it out of line once it had two ways to read).
  [[gnu::always_inline]] Op operator[](OpId id) const {
    const OpStore& s = *store_;
    if (s.runs_.empty()) return s.records_[id];
    if (id - begin_ >= length_) find(id);  // also when id < begin_ (unsigned)
    return map_peers_ ? s.read(id, run_) : s.read_without_peer(id, run_);
  }

 private:
  void find(OpId id) const;  // out of line: the loop's path is the one above
  const OpStore* store_ = nullptr;
  bool map_peers_ = true;
  // The run last read in: ids [begin_, begin_ + length_)
  mutable std::size_t run_ = 0;
  mutable OpId begin_ = 0;
  mutable OpId length_ = 0;
};

// Random access, reading as a Reader does.
class OpStore::const_iterator {
 public:
  using iterator_concept = std::random_access_iterator_tag;
  using iterator_category = std::input_iterator_tag;  // `reference` is a value
  using value_type = Op;
  using difference_type = std::ptrdiff_t;
  using reference = Op;
  using pointer = void;

  const_iterator() = default;
  const_iterator(const OpStore* store, OpId id) : reader_(*store), id_(id) {}

  Op operator*() const { return reader_[id_]; }
  Op operator[](difference_type n) const { return *(*this + n); }
  // The id of the op it points at.
  OpId id() const { return id_; }

  const_iterator& operator++() {
    ++id_;
    return *this;
  }
  const_iterator operator++(int) {
    auto old = *this;
    ++id_;
    return old;
  }
  const_iterator& operator--() {
    --id_;
    return *this;
  }
  const_iterator operator--(int) {
    auto old = *this;
    --id_;
    return old;
  }
  const_iterator& operator+=(difference_type n) {
    id_ = static_cast<OpId>(static_cast<difference_type>(id_) + n);
    return *this;
  }
  const_iterator& operator-=(difference_type n) { return *this += -n; }
  friend const_iterator operator+(const_iterator i, difference_type n) { return i += n; }
  friend const_iterator operator+(difference_type n, const_iterator i) { return i += n; }
  friend const_iterator operator-(const_iterator i, difference_type n) { return i -= n; }
  friend difference_type operator-(const const_iterator& a, const const_iterator& b) {
    return static_cast<difference_type>(a.id_) - static_cast<difference_type>(b.id_);
  }
  friend bool operator==(const const_iterator& a, const const_iterator& b) {
    return a.id_ == b.id_;
  }
  friend auto operator<=>(const const_iterator& a, const const_iterator& b) {
    return a.id_ <=> b.id_;
  }

 private:
  Reader reader_;
  OpId id_ = 0;
};

inline Op OpStore::stamped_rank_and_deps(const Stamp& s, Op op) {
  op.rank = s.rank;
  op.deps_begin += s.deps_shift;
  return op;
}

inline Op OpStore::stamped(const Stamp& s, Op op) {
  op = stamped_rank_and_deps(s, op);
  if (op.kind != OpKind::compute && op.kind != OpKind::copy) op.group_or_peer = mapped(s, op);
  return op;
}

inline Op OpStore::read(OpId id, std::size_t run) const {
  const Run& r = runs_[run];
  const Op& op = records_[r.record + (id - r.begin)];
  return r.stamp == kNone ? op : stamped(stamps_[r.stamp], op);
}

template <bool kMapPeers, class F>
void OpStore::for_each_non_compute(F&& f) const {
  if (runs_.empty()) {
    for (std::uint32_t record : non_compute_)
      f(static_cast<OpId>(record), records_[record]);
    return;
  }
  for (std::size_t run = 0; run < runs_.size(); ++run) {
    const Run& r = runs_[run];
    const std::uint32_t last = r.record + (run_end(run) - r.begin);  // past its last record
    auto it = std::lower_bound(non_compute_.begin(), non_compute_.end(), r.record);
    for (; it != non_compute_.end() && *it < last; ++it) {
      const OpId id = r.begin + (*it - r.record);
      if (r.stamp == kNone)
        f(id, records_[*it]);
      else if constexpr (kMapPeers)
        f(id, stamped(stamps_[r.stamp], records_[*it]));
      else
        f(id, stamped_rank_and_deps(stamps_[r.stamp], records_[*it]));
    }
  }
}

template <class F>
void OpStore::for_each_run(F&& f) const {
  if (runs_.empty()) {
    if (size_ > 0) f(RunView{0, static_cast<OpId>(size_), 0, false, 0});
    return;
  }
  for (std::size_t run = 0; run < runs_.size(); ++run) {
    const Run& r = runs_[run];
    const bool stamped = r.stamp != kNone;
    f(RunView{r.begin, run_end(run), r.record, stamped, stamped ? stamps_[r.stamp].rank : 0});
  }
}

inline Op OpStore::read_without_peer(OpId id, std::size_t run) const {
  const Run& r = runs_[run];
  const Op& op = records_[r.record + (id - r.begin)];
  return r.stamp == kNone ? op : stamped_rank_and_deps(stamps_[r.stamp], op);
}

inline OpStore::Reader OpStore::reader() const {
  return Reader(*this);
}
inline OpStore::Reader OpStore::reader_without_peers() const {
  return Reader(*this, false);
}
inline OpStore::const_iterator OpStore::begin() const {
  return {this, 0};
}
inline OpStore::const_iterator OpStore::end() const {
  return {this, static_cast<OpId>(size_)};
}

}  // namespace clustersim::engine
