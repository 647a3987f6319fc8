// The per-op timeline of a run as a Python dict of equal-length lists (one entry per op, in op
// order), the columnar shape pandas.DataFrame(...) takes as is. NumPy is not needed.
#pragma once

#include <pybind11/pybind11.h>

#include "models/frontend.hpp"

namespace clustersim::python {

// Keys: rank, stream, kind, category, label, start_s, end_s, flops, bytes, group (the process
// group of a collective, "" otherwise), peer (the other rank of a send/recv, -1 otherwise).
// Needs the GIL.
pybind11::dict timeline_columns(const models::Prediction& prediction);

}  // namespace clustersim::python
