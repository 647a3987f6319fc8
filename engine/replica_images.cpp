#include "engine/replica_images.hpp"

#include <stdexcept>
#include <string>
#include <unordered_map>

namespace clustersim::engine {

ReplicaImages::ReplicaImages(const Schedule& s) {
  if (s.mirror.size() != s.num_ranks)
    throw std::invalid_argument("replica images: the schedule is not folded");
  slot_.assign(s.num_ranks, kNone);
  std::vector<std::vector<Rank>> of;  // per simulated rank, the ranks that mirror it
  for (Rank r = 0; r < s.num_ranks; ++r)
    if (s.mirror[r] == r) {
      slot_[r] = static_cast<std::uint32_t>(of.size());
      of.emplace_back();
    }
  for (Rank r = 0; r < s.num_ranks; ++r)  // ascending, so each list is in replica order
    if (s.mirror[r] != r) of[slot_[s.mirror[r]]].push_back(r);
  if (of.empty()) throw std::invalid_argument("replica images: no rank is simulated");
  replicas_ = static_cast<std::uint32_t>(of.front().size() + 1);
  images_.reserve(of.size() * (replicas_ - 1));
  for (std::size_t i = 0; i < of.size(); ++i) {
    if (of[i].size() + 1 != replicas_)
      throw std::invalid_argument(
          "replica images: simulated ranks stand for " + std::to_string(replicas_) + " and " +
          std::to_string(of[i].size() + 1) + " replicas; every one must stand for as many");
    images_.insert(images_.end(), of[i].begin(), of[i].end());
  }
  local_.reserve(s.groups.size());
  for (const ProcessGroup& g : s.groups) {
    bool all = true;
    for (Rank r : g.ranks)
      all = all && s.mirror[r] == r;
    local_.push_back(all ? 1 : 0);
  }
}

namespace {

// Every link a flow of `plan` that carries bytes crosses, in route order, phase by phase.
template <class Visit>
void for_each_link(const TransferPlan& plan, const Topology& topology, Visit&& visit) {
  for (const Phase& phase : plan.phases)
    for (const FlowSpec& flow : phase.flows)
      if (flow.bytes_per_payload_byte > 0.0)
        for (LinkId l : topology.route(flow.src, flow.dst))
          visit(l);
}

// Whether `image` is `plan` on other links: what the flow model reads of a plan (its
// calibration shape, each phase's latency for `bytes`, rate cap and flows, each flow's bytes and
// its route's length and bandwidths) is equal.
bool same_shape(const TransferPlan& plan, const TransferPlan& image, double bytes,
                const Topology& topology) {
  if (plan.collective != image.collective || plan.ranks != image.ranks ||
      plan.nodes != image.nodes || plan.phases.size() != image.phases.size())
    return false;
  for (std::size_t p = 0; p < plan.phases.size(); ++p) {
    const Phase& a = plan.phases[p];
    const Phase& b = image.phases[p];
    if (a.latency_for(bytes) != b.latency_for(bytes) ||
        a.rate_cap_for(bytes) != b.rate_cap_for(bytes) || a.flows.size() != b.flows.size())
      return false;
    for (std::size_t i = 0; i < a.flows.size(); ++i) {
      if (a.flows[i].bytes_per_payload_byte != b.flows[i].bytes_per_payload_byte) return false;
      const auto ra = topology.route(a.flows[i].src, a.flows[i].dst);
      const auto rb = topology.route(b.flows[i].src, b.flows[i].dst);
      if (ra.size() != rb.size()) return false;
      for (std::size_t h = 0; h < ra.size(); ++h)
        if (topology.link(ra[h]).bandwidth.bytes_per_second() !=
            topology.link(rb[h]).bandwidth.bytes_per_second())
          return false;
    }
  }
  return true;
}

}  // namespace

std::vector<std::uint8_t> images_to_carry(const std::vector<ReplicaCall>& calls,
                                          const Topology& topology) {
  const std::size_t n = calls.size();
  std::vector<std::uint8_t> carry(n, 0);
  std::vector<std::uint8_t> shared(topology.num_links(), 0);
  auto share = [&](const ReplicaCall& c) {
    const auto mark = [&](LinkId l) { shared[l] = 1; };
    for_each_link(*c.plan, topology, mark);
    for (const TransferPlan* image : c.images)
      for_each_link(*image, topology, mark);
  };
  auto touches_shared = [&](const ReplicaCall& c) {
    bool hit = false;
    const auto test = [&](LinkId l) { hit = hit || shared[l] != 0; };
    for_each_link(*c.plan, topology, test);
    for (const TransferPlan* image : c.images)
      for_each_link(*image, topology, test);
    return hit;
  };
  for (std::size_t c = 0; c < n; ++c) {
    const ReplicaCall& call = calls[c];
    bool alike = call.local;
    for (const TransferPlan* image : call.images)
      alike = alike && same_shape(*call.plan, *image, call.bytes, topology);
    if (!alike) {  // cross-replica calls are carried whole; unlike images are carried too
      carry[c] = call.local ? 1 : 0;
      share(call);
    }
  }
  const auto is_private = [&](std::size_t c) { return calls[c].local && carry[c] == 0; };
  for (bool changed = true; changed;) {
    changed = false;
    // A private call that meets shared links is carried, and its links are shared in turn.
    for (bool grew = true; grew;) {
      grew = false;
      for (std::size_t c = 0; c < n; ++c)
        if (is_private(c) && touches_shared(calls[c])) {
          carry[c] = 1;
          share(calls[c]);
          grew = true;
        }
    }
    // Each private link belongs to one replica, and replica k's map one to one onto replica 0's.
    std::vector<std::int32_t> owner(topology.num_links(), -1);
    std::vector<std::unordered_map<LinkId, LinkId>> to_image, from_image;
    for (std::size_t c = 0; c < n && !changed; ++c) {
      if (!is_private(c)) continue;
      const ReplicaCall& call = calls[c];
      bool ok = true;
      const auto own = [&](LinkId l, std::int32_t replica) {
        ok = ok && (owner[l] == -1 || owner[l] == replica);
        owner[l] = replica;
      };
      std::vector<LinkId> original, image;
      for_each_link(*call.plan, topology, [&](LinkId l) {
        own(l, 0);
        original.push_back(l);
      });
      to_image.resize(std::max(to_image.size(), call.images.size()));
      from_image.resize(to_image.size());
      for (std::size_t k = 0; k < call.images.size() && ok; ++k) {
        image.clear();
        for_each_link(*call.images[k], topology, [&](LinkId l) {
          own(l, static_cast<std::int32_t>(k + 1));
          image.push_back(l);
        });
        for (std::size_t i = 0; i < original.size() && ok; ++i)  // same_shape: as many links
          ok = to_image[k].emplace(original[i], image[i]).first->second == image[i] &&
               from_image[k].emplace(image[i], original[i]).first->second == original[i];
      }
      if (!ok) {
        carry[c] = 1;
        share(call);
        changed = true;
      }
    }
  }
  return carry;
}

}  // namespace clustersim::engine
