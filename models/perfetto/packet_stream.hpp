// Internal to models/perfetto: writes TracePackets as the fields of one Trace message, either
// plain or in Perfetto's compressed bundles (TracePacket.compressed_packets: runs of framed packets
// in zlib's format, as Perfetto's own tracing service writes them when a trace config asks for
// COMPRESSION_TYPE_DEFLATE; trace processor and the UI inflate them). A bundle is compressed on a
// second thread while the next one fills, so compression costs little wall time.
#pragma once

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl.h>

#include <cstddef>
#include <deque>
#include <future>
#include <ostream>
#include <string>

#include "perfetto_trace.pb.h"

namespace clustersim::models::perfetto_framing {

class PacketStream {
 public:
  PacketStream(std::ostream& out, bool compress);
  ~PacketStream();
  PacketStream(const PacketStream&) = delete;
  PacketStream& operator=(const PacketStream&) = delete;

  void write(const perfetto::protos::TracePacket& packet);
  // Writes what is pending, then says whether every write succeeded (a failed compression throws).
  bool finish();

 private:
  void seal_bundle();
  void write_oldest_bundle();
  void write_framed(const perfetto::protos::TracePacket& packet);

  google::protobuf::io::OstreamOutputStream zero_copy_;
  google::protobuf::io::CodedOutputStream coded_;
  const bool compress_;
  std::string bundle_;                           // framed packets not yet compressed
  std::deque<std::future<std::string>> sealed_;  // compressed bundles, oldest first
  perfetto::protos::TracePacket outer_;
};

}  // namespace clustersim::models::perfetto_framing
