// The breakdown and memory tables of a prediction, as the views draw them.
#pragma once

#include "gui/models/segment_table.hpp"
#include "models/frontend.hpp"

namespace clustersim::gui {

// Per rank: compute, recompute, exposed dp/tp/pp/ep communication and idle (the pipeline bubble
// and waiting), seconds per iteration; the critical rank is the marked row.
SegmentTable breakdown_table(const models::Prediction& prediction);

// Per pipeline stage: each stage's peak (weights, gradients, optimizer, activations, buffers)
// plus the overheads outside the tensors, bytes, against the GPU's capacity; the stage of the
// peak is the marked row.
SegmentTable memory_table(const models::Prediction& prediction);

}  // namespace clustersim::gui
