// The CUDA backend's inventory in the profile (docs/calibration.md "Profile format"): devices,
// the nvidia-smi topology and per-pair peer copies survive a JSON round trip; bad values name
// their key.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "calibrate/profile.hpp"
#include "engine/calibration/json_fields.hpp"

namespace clustersim::calibrate {
namespace {

Profile with_inventory() {
  Profile p;
  p.provenance.date = "2024-05-01T12:00:00Z";
  p.provenance.backend = "cuda";
  p.provenance.ranks = 2;
  // An H100 SXM5: 132 SMs, compute capability 9.0, 80 GiB.
  p.provenance.devices = {
      {0, "NVIDIA H100 80GB HBM3", "0000:18:00.0", 85899345920.0, 8.4e10, 9, 0, 132},
      {1, "NVIDIA H100 80GB HBM3", "0000:2a:00.0", 85899345920.0, 8.4e10, 9, 0, 132}};
  p.provenance.fabric = "nvswitch";
  p.provenance.gpu_links = {{"GPU0", "GPU1", "NV18"}};
  CopyMeasurement peer{"peer", 1 << 20, 1e-5};
  peer.src = 1;
  peer.dst = 0;
  p.measurements.copies = {peer, {"h2d", 1 << 20, 4e-5}};
  return p;
}

TEST(ProfileInventory, RoundTrips) {
  const Profile in = with_inventory();
  const Profile out = profile_from_json(to_json(in), "inventory.json");
  ASSERT_EQ(out.provenance.devices.size(), 2u);
  EXPECT_EQ(out.provenance.devices[1].pci_bus_id, "0000:2a:00.0");
  EXPECT_EQ(out.provenance.devices[0].cc_major, 9);
  EXPECT_EQ(out.provenance.devices[0].sm_count, 132);
  EXPECT_EQ(out.provenance.devices[0].memory_total, 85899345920.0);
  EXPECT_EQ(out.provenance.fabric, "nvswitch");
  ASSERT_EQ(out.provenance.gpu_links.size(), 1u);
  EXPECT_EQ(out.provenance.gpu_links[0].link, "NV18");
  EXPECT_EQ(out.measurements.copies[0].src, 1);
  EXPECT_EQ(out.measurements.copies[0].dst, 0);
  EXPECT_EQ(out.measurements.copies[1].src, -1);  // absent: no device
  EXPECT_EQ(to_json(in)["provenance"]["devices"][0]["compute_capability"], "9.0");
}

TEST(ProfileInventory, BadComputeCapabilityNamesTheKey) {
  nlohmann::json doc = to_json(with_inventory());
  doc["provenance"]["devices"][1]["compute_capability"] = "nine";
  try {
    (void)profile_from_json(doc, "inventory.json");
    FAIL() << "accepted a compute capability of 'nine'";
  } catch (const engine::ProfileError& e) {
    EXPECT_NE(
        std::string(e.what()).find("inventory.json: provenance.devices[1].compute_capability"),
        std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace clustersim::calibrate
