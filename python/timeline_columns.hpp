// The per-op timeline of a run as a Python dict of equal-length columns (one entry per op, in op
// order), the columnar shape pandas.DataFrame(...) takes as is. The numeric columns are NumPy
// arrays when asked for (written in place: no Python object per op), else lists, so NumPy is
// not needed.
#pragma once

#include <pybind11/pybind11.h>

#include "models/frontend.hpp"

namespace clustersim::python {

// Keys: rank, stream, kind, category, label, start_s, end_s, flops, bytes, group (the process
// group of a collective, "" otherwise), peer (the other rank of a send/recv, -1 otherwise).
// With `numpy`, rank and peer are int64 arrays, start_s, end_s and flops float64, bytes uint64;
// the text columns stay lists. Needs the GIL (and NumPy importable when `numpy`).
pybind11::dict timeline_columns(const models::Prediction& prediction, bool numpy);

}  // namespace clustersim::python
