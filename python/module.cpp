// clustersim._native: the compiled half of the `clustersim` Python package, a thin layer over the
// front-end API (models/frontend.hpp). Presentation only: clustersim/__init__.py turns dicts and
// keyword arguments into a RunRequest's text and overrides, and this file runs it with the GIL
// released, maps C++ errors to Python ones, and hands back the result JSON's text and the
// timeline.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <exception>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "engine/network/network_model.hpp"
#include "engine/simulator.hpp"
#include "models/frontend.hpp"
#include "python/timeline_columns.hpp"

namespace py = pybind11;
using namespace clustersim;

namespace {

// The exception classes this module defines; they live as long as the interpreter.
PyObject* scenario_error_type = nullptr;
PyObject* output_path_error_type = nullptr;

// Raises clustersim.ScenarioError with attributes apart from the message: file, line, column,
// key (empty or 0 when unknown).
void raise_scenario_error(const std::string& message, const models::SourceLocation& where,
                          const std::string& key) {
  py::object error = py::reinterpret_borrow<py::object>(scenario_error_type)(message);
  error.attr("file") = where.file;
  error.attr("line") = where.line;
  error.attr("column") = where.column;
  error.attr("key") = key;
  PyErr_SetObject(scenario_error_type, error.ptr());
}

// Runs `work` on a worker thread. This thread, which holds the GIL on entry, releases it and
// wakes every 50 ms to let Python run its signal handlers: Ctrl-C sets the cancel flag the
// front-end API polls, the worker stops (models::Cancelled), and KeyboardInterrupt is raised here.
void run_interruptibly(const std::function<void(const std::atomic<bool>& cancel)>& work) {
  std::atomic<bool> cancel{false};
  std::exception_ptr failure;
  std::optional<py::error_already_set> interrupt;
  {
    py::gil_scoped_release release;
    std::mutex mutex;
    std::condition_variable finished;
    bool done = false;
    std::thread worker([&] {
      try {
        work(cancel);
      } catch (...) {
        failure = std::current_exception();
      }
      const std::lock_guard lock(mutex);
      done = true;
      finished.notify_one();
    });
    std::unique_lock lock(mutex);
    while (!finished.wait_for(lock, std::chrono::milliseconds(50), [&] { return done; })) {
      if (interrupt) continue;
      lock.unlock();
      {
        const py::gil_scoped_acquire gil;
        if (PyErr_CheckSignals() != 0) {
          interrupt.emplace();  // takes the pending KeyboardInterrupt (or the handler's error)
          cancel = true;
        }
      }
      lock.lock();
    }
    lock.unlock();
    worker.join();
  }
  if (interrupt) throw *interrupt;
  if (failure) std::rethrow_exception(failure);
}

// What clustersim.run() needs back: the result JSON's text and, when asked for, the timeline.
py::tuple run(const std::string& scenario, const std::optional<std::string>& text,
              const std::vector<std::string>& overrides, const std::optional<std::string>& network,
              int timeline_mode, const std::optional<std::string>& json_out,
              const std::optional<std::string>& trace_out, bool reproducible) {
  if (network) {
    const std::vector<std::string> allowed = engine::network_model_names();
    if (std::find(allowed.begin(), allowed.end(), *network) == allowed.end()) {
      std::string list;
      for (const std::string& name : allowed)
        list += (list.empty() ? "" : ", ") + name;
      raise_scenario_error("network: unknown network model '" + *network + "'; allowed: " + list,
                           {}, "network");
      throw py::error_already_set();
    }
  }
  models::RunRequest request;
  request.scenario = scenario;
  request.text = text;
  request.overrides = overrides;
  request.network = network;
  request.record_link_rates = trace_out.has_value();
  if (json_out) request.outputs.emplace_back(*json_out, "json_out");
  if (trace_out) request.outputs.emplace_back(*trace_out, "trace_out");

  std::optional<models::Prediction> prediction;
  run_interruptibly([&](const std::atomic<bool>& cancel) {
    request.cancel = &cancel;
    prediction.emplace(models::predict(request));
    if (json_out) models::write_result_json(*prediction, *json_out, reproducible);
    if (trace_out) models::write_trace(*prediction, *trace_out);
  });
  py::object timeline = py::none();
  // 0: none, 1: lists, 2: NumPy arrays (clustersim/__init__.py decides, NumPy importable).
  if (timeline_mode > 0) timeline = python::timeline_columns(*prediction, timeline_mode == 2);
  return py::make_tuple(models::result_json_text(*prediction, reproducible), timeline);
}

// The network model a run of these arguments would use: `network`, else the scenario's
// simulation.network_model (clustersim.sweep runs simgrid points in processes of their own).
std::string network_model(const std::string& scenario, const std::optional<std::string>& text,
                          const std::vector<std::string>& overrides,
                          const std::optional<std::string>& network) {
  if (network) return *network;
  const models::Scenario s = text ? models::parse_scenario(*text, scenario, overrides)
                                  : models::load_scenario(scenario, overrides);
  return s.simulation.network_model;
}

py::dict presets() {
  const models::PresetNames names = models::preset_names();
  py::dict out;
  out["gpus"] = names.gpus;
  out["nodes"] = names.nodes;
  out["models"] = names.models;
  return out;
}

}  // namespace

PYBIND11_MODULE(_native, m) {
  m.doc() = "clustersim's compiled half; use the clustersim package, not this module";
  scenario_error_type = PyErr_NewExceptionWithDoc(
      "clustersim.ScenarioError",
      "Bad scenario input. Attributes: file, line, column (0 when unknown) and key (the key "
      "path, e.g. 'parallel.tp'; '' when the error is about no one key).",
      PyExc_ValueError, nullptr);
  output_path_error_type = PyErr_NewExceptionWithDoc(
      "clustersim.OutputPathError",
      "An output path that must not be written (an input of the scenario, a directory, ...).",
      PyExc_ValueError, nullptr);
  if (!scenario_error_type || !output_path_error_type) throw py::error_already_set();
  m.attr("ScenarioError") = py::handle(scenario_error_type);
  m.attr("OutputPathError") = py::handle(output_path_error_type);

  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const models::ScenarioError& e) {
      raise_scenario_error(e.what(), e.where(), e.key());
    } catch (const engine::ClockOverflow& e) {
      // The scenario's own figures overflow the clock: bad input, as in the CLI (exit 2).
      raise_scenario_error(e.what(), {}, "");
    } catch (const models::OutputPathError& e) {
      PyErr_SetString(output_path_error_type, e.what());
    } catch (const models::Cancelled& e) {
      PyErr_SetString(PyExc_KeyboardInterrupt, e.what());
    }
  });

  m.def("run", &run, py::arg("scenario"), py::arg("text"), py::arg("overrides"), py::arg("network"),
        py::arg("timeline"), py::arg("json"), py::arg("trace"), py::arg("reproducible"));
  m.def("network_model", &network_model, py::arg("scenario"), py::arg("text"), py::arg("overrides"),
        py::arg("network"));
  m.def("presets", &presets);
  m.def("network_models", &engine::network_model_names);
}
