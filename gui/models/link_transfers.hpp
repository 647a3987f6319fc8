// Topology → timeline: which communication ops put bytes on a link. A collective's (or a
// send/recv's) flows follow its transfer plan, each flow on its route; the plan is the one the
// run used (engine/network/op_transfer.hpp: the recorded algorithm and protocol), so nothing of
// the routing is redone here. Computed for the chosen link only, when it is chosen: one pass over
// the ops, each plan resolved once per distinct call (group, type, root, algorithm, protocol).
#pragma once

#include <QObject>
#include <atomic>
#include <memory>
#include <vector>

#include "engine/schedule.hpp"
#include "engine/timeline.hpp"
#include "engine/topology.hpp"
#include "gui/models/run_controller.hpp"

namespace clustersim::gui {

using OpList = std::vector<engine::OpId>;

// The collectives, sends and recvs (every member's op) whose transfer has a flow carrying bytes
// over one of `links`, in id order. Linear in ops; routes are cached inside `topology`, which is
// therefore not shared with another thread while this runs. Returns early (empty) when `cancel`
// is set.
OpList transfers_over(const engine::Schedule& schedule, const engine::Timeline& timeline,
                      const engine::Topology& topology, const std::vector<engine::LinkId>& links,
                      const std::atomic<bool>* cancel = nullptr);

// transfers_over() on Qt's thread pool for the shown run, a few hundred milliseconds on 15 M ops:
// a newer search cancels the one in flight, whose result is then dropped.
class LinkTransferSearch : public QObject {
  Q_OBJECT

 public:
  explicit LinkTransferSearch(QObject* parent = nullptr);
  ~LinkTransferSearch() override;

  // Searches `presentation`'s run (it must hold a prediction) for the transfers over `links`.
  void start(PresentationPtr presentation, std::vector<engine::LinkId> links);
  void cancel();
  bool busy() const { return running_ > 0; }
  // Blocks until no search is in flight (tests, shutdown).
  void wait_idle();

 signals:
  void found(std::vector<engine::LinkId> links, clustersim::gui::OpList ops);

 private:
  quint64 latest_job_ = 0;
  int running_ = 0;
  std::shared_ptr<std::atomic<bool>> cancel_flag_;
};

}  // namespace clustersim::gui
