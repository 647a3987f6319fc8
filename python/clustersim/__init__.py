"""clustersim: predict how one training iteration runs on a GPU cluster (docs/python.md).

    >>> import clustersim
    >>> r = clustersim.run("scenarios/resnet50-ddp-dgx-a100.yaml", set={"parallel.bucket_mb": 50})
    >>> r["iteration_time_s"], r["mfu"]

Everything here is presentation over the front-end API the `clustersim` command uses
(models/frontend.hpp): the results are the same figures, with the result JSON's keys.
"""

import itertools
import json
import os
import pickle
import signal

from ._native import OutputPathError, ScenarioError
from . import _native

__all__ = ["run", "sweep", "presets", "network_models", "ScenarioError", "OutputPathError"]


def _yaml_value(value):
    """An override's value as YAML text, the way `--set key=value` takes it."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, str):
        return value
    if isinstance(value, os.PathLike):
        return os.fspath(value)
    return json.dumps(value)  # lists and mappings: JSON is YAML flow syntax


def _overrides(values):
    if values is None:
        return []
    if not isinstance(values, dict):
        raise TypeError("set= takes a dict {'key.path': value}, got " + type(values).__name__)
    return [f"{key}={_yaml_value(value)}" for key, value in values.items()]


def _timeline_mode(timeline):
    """0: no timeline, 1: lists, 2: NumPy arrays (the native module's codes)."""
    if timeline is None or timeline is False:
        return 0
    if isinstance(timeline, str):
        if timeline == "lists":
            return 1
        if timeline == "numpy":
            import numpy  # noqa: F401  (ImportError names what is missing)
            return 2
    elif timeline is True:
        try:
            import numpy  # noqa: F401
            return 2
        except ImportError:
            return 1
    raise ValueError("timeline: True, False, 'numpy' or 'lists', got " + repr(timeline))


def _origin_and_text(scenario):
    """The scenario's origin (its path, or "<dict>") and its text when it is a dict."""
    if isinstance(scenario, dict):
        # JSON is YAML: the scenario loader reads it as it reads a file, and errors name the key.
        return "<dict>", json.dumps(scenario, indent=2)
    if isinstance(scenario, (str, os.PathLike)):
        return os.fspath(scenario), None
    raise TypeError("scenario: a path or a dict, got " + type(scenario).__name__)


def _in_own_process(call):
    """call() in a forked child: its value, or the exception it raised, raised here.

    SimGrid's engine starts once per process (docs/sweeps.md "Network models that run once per
    process"), so each simgrid point of a sweep runs in a child of its own, as the CLI's sweep
    does. Ctrl-C reaches the child too (same process group); the parent then kills it.
    """
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: send (ok, value) back and leave without the parent's clean-up
        os.close(read_end)
        try:
            try:
                payload = pickle.dumps((True, call()))
            except BaseException as error:  # noqa: B902 -- the parent re-raises it
                payload = pickle.dumps((False, error))
        except BaseException as error:  # noqa: B902 -- an unpicklable result or exception
            payload = pickle.dumps((False, RuntimeError(
                "the point's result could not be sent back from its process: " + repr(error))))
        with os.fdopen(write_end, "wb") as out:
            out.write(payload)
        os._exit(0)
    os.close(write_end)
    try:
        with os.fdopen(read_end, "rb") as incoming:
            payload = incoming.read()
        _, status = os.waitpid(pid, 0)
    except BaseException:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        raise
    if not payload:
        reason = ("was killed by signal %d" % os.WTERMSIG(status) if os.WIFSIGNALED(status)
                  else "exited with status %d" % os.WEXITSTATUS(status))
        raise RuntimeError("the point's process (pid %d) %s without a result" % (pid, reason))
    ok, value = pickle.loads(payload)
    if ok:
        return value
    raise value


def run(scenario, set=None, network=None, timeline=True, json_out=None, trace_out=None,
        reproducible=False):
    """Simulate one scenario and return its result as a dict.

    scenario: a scenario file's path, or the scenario itself as a dict (the YAML file's
        structure; relative paths in it are taken from the current directory).
    set: overrides by key path, as `clustersim run --set`: {"parallel.tp": 4}.
    network: "analytical", "flow", "simgrid" or "ideal" (replaces simulation.network_model).
    timeline: add "timeline", the per-op timeline as a dict of equal-length columns: with
        True, the numeric ones (rank, start_s, end_s, flops, bytes, peer) are NumPy arrays where
        NumPy is installed and lists where it is not; "numpy" insists on arrays (ImportError
        without NumPy), "lists" on lists; False leaves it out.
    json_out, trace_out: also write the result JSON / the Chrome trace there (atomically).
    reproducible: simulator.wall_s reads 0, so identical inputs give identical results.

    The keys are those of `clustersim run --json` (docs/outputs.md). Raises ScenarioError (with
    .file, .line, .column, .key) on bad input and KeyboardInterrupt when Ctrl-C cancels the run.
    The GIL is released while the simulation runs.
    """
    origin, text = _origin_and_text(scenario)
    result_text, columns = _native.run(
        origin, text, _overrides(set), network, _timeline_mode(timeline),
        None if json_out is None else os.fspath(json_out),
        None if trace_out is None else os.fspath(trace_out), bool(reproducible))
    result = json.loads(result_text)
    if columns is not None:
        result["timeline"] = columns
    return result


def sweep(scenario, vary, set=None, network=None, timeline=False):
    """Run every combination of the values in `vary` ({"key.path": [v1, v2, ...]}).

    Returns a list of {"point": {key: value, ...}, "result": run()'s dict}, in the order of
    itertools.product over `vary` (the first key varies slowest). `set` applies to every point;
    a key in both takes the point's value. Each point is one run() (the GIL is released while it
    simulates); the first bad point raises its ScenarioError. A point on the simgrid network model
    runs in a forked process of its own, since SimGrid starts once per process.
    """
    if not isinstance(vary, dict) or not vary:
        raise TypeError("vary= takes a non-empty dict {'key.path': [values]}")
    keys = list(vary)
    origin, text = _origin_and_text(scenario)
    points = []
    for values in itertools.product(*(list(vary[k]) for k in keys)):
        point = dict(zip(keys, values))
        overrides = dict(set or {})
        overrides.update(point)
        def point_run(overrides=overrides):
            return run(scenario, set=overrides, network=network, timeline=timeline)
        own_process = _native.network_model(origin, text, _overrides(overrides),
                                            network) == "simgrid"
        points.append({"point": point,
                       "result": _in_own_process(point_run) if own_process else point_run()})
    return points


def presets():
    """The built-in presets' names: {"gpus": [...], "nodes": [...], "models": [...]}."""
    return _native.presets()


def network_models():
    """The network models `network=` accepts."""
    return list(_native.network_models())
