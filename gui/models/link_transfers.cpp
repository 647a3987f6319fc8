#include "gui/models/link_transfers.hpp"

#include <QFutureWatcher>
#include <QtConcurrent>
#include <algorithm>

#include "engine/network/op_transfer.hpp"
#include "gui/models/presentation.hpp"

namespace clustersim::gui {

namespace {

// A collective call's plan is fixed by these on its group (simulate() caches it the same way).
struct CallOnGroup {
  engine::CollectiveType type;
  std::uint32_t root;
  engine::Algorithm algorithm;
  engine::Protocol protocol;
  bool crosses;
};

}  // namespace

OpList transfers_over(const engine::Schedule& schedule, const engine::Timeline& timeline,
                      const engine::Topology& topology, const std::vector<engine::LinkId>& links,
                      const std::atomic<bool>* cancel) {
  using engine::OpKind;
  // Scanned per op like the simulator's call lists: a handful of shapes per group or sender.
  std::vector<std::vector<CallOnGroup>> by_group(schedule.groups.size());
  std::vector<std::vector<std::pair<engine::Rank, bool>>> by_sender(schedule.num_ranks);
  auto crosses = [&](engine::OpId id) {
    return engine::plan_crosses(engine::plan_of_op(schedule, timeline, id, topology), topology,
                                links);
  };
  OpList out;
  const engine::OpStore::Reader in_order = schedule.ops.reader();
  for (engine::OpId id = 0; id < schedule.ops.size(); ++id) {
    if (id % 65'536 == 0 && cancel != nullptr && cancel->load(std::memory_order_relaxed)) return {};
    const engine::Op op = in_order[id];
    const bool p2p = op.kind == OpKind::send || op.kind == OpKind::recv;
    if (op.kind != OpKind::collective && !p2p) continue;
    // A transfer of no bytes, or one that never ran, put nothing on any link.
    if (op.bytes == 0 || timeline.end[id] < timeline.start[id]) continue;
    bool hit = false;
    if (p2p) {
      const bool send = op.kind == OpKind::send;
      const engine::Rank sender = send ? op.rank : op.group_or_peer;
      const engine::Rank receiver = send ? op.group_or_peer : op.rank;
      auto& calls = by_sender[sender];
      auto it = std::find_if(calls.begin(), calls.end(),
                             [&](const auto& call) { return call.first == receiver; });
      if (it == calls.end()) it = calls.insert(calls.end(), {receiver, crosses(id)});
      hit = it->second;
    } else {
      auto& calls = by_group[op.group_or_peer];
      const auto algorithm = timeline.algorithm[id];
      const auto protocol = timeline.protocol[id];
      auto it = std::find_if(calls.begin(), calls.end(), [&](const CallOnGroup& c) {
        return c.type == op.collective && c.root == op.tag() && c.algorithm == algorithm &&
               c.protocol == protocol;
      });
      if (it == calls.end())
        it = calls.insert(calls.end(), {op.collective, op.tag(), algorithm, protocol, crosses(id)});
      hit = it->crosses;
    }
    if (hit) out.push_back(id);
  }
  return out;
}

LinkTransferSearch::LinkTransferSearch(QObject* parent) : QObject(parent) {}

LinkTransferSearch::~LinkTransferSearch() {
  cancel();
  wait_idle();
}

void LinkTransferSearch::cancel() {
  if (cancel_flag_) cancel_flag_->store(true);
}

void LinkTransferSearch::wait_idle() {
  wait_for_jobs(running_);
}

void LinkTransferSearch::start(PresentationPtr presentation, std::vector<engine::LinkId> links) {
  cancel();  // the search in flight is stale now
  cancel_flag_ = std::make_shared<std::atomic<bool>>(false);
  const quint64 job = ++latest_job_;
  ++running_;
  auto watcher = new QFutureWatcher<OpList>(this);
  const auto flag = cancel_flag_;
  connect(watcher, &QFutureWatcher<OpList>::finished, this, [this, watcher, job, links, flag] {
    const OpList ops = watcher->result();
    watcher->deleteLater();
    --running_;
    if (job == latest_job_ && !flag->load()) emit found(links, ops);  // else stale: dropped
  });
  watcher->setFuture(QtConcurrent::run([presentation, links, flag] {
    const auto& output = presentation->prediction->output;
    // A copy of its own: Topology caches routes as it is asked, and the GUI thread reads it.
    const engine::Topology topology = output.topology;
    try {
      return transfers_over(output.built.schedule, output.timeline, topology, links, flag.get());
    } catch (const std::exception&) {  // a plan the engine refuses: nothing to select
      return OpList{};
    }
  }));
}

}  // namespace clustersim::gui
