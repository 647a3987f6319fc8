"""The clustersim Python module (docs/python.md), run by ctest with the build tree's package on
PYTHONPATH. The figures come from the DDP scenario worked out by hand in tests/models/test_ddp.cpp
(restated below), not from the simulator's own output.

The scenario: one NVSwitch node of 4 GPUs, 100 GB/s per direction per GPU, 1 us per link; bf16
peak 100 TFLOP/s, fp32 10 TFLOP/s, HBM 1 TB/s, efficiencies 1, no launch overhead; four layers
L0..L3 with 3e5, 4e5, 6e5, 2e5 parameters and 4e9, 1e9, 2e9, 1e9 forward FLOPs per sample;
global batch 4 = one micro-batch of 1 per GPU.
  forward 80 us (8e9 FLOPs / 1e14), backward 160 us (twice), Adam 1.5e6 params x 28 B / 1e12 B/s
  = 42 us. Buckets (0.5 MiB, the first 1 MiB): L3+L2 1.6e6 B, L1 0.8e6 B, L0 0.6e6 B; a ring
  all-reduce with LL128 over 4 GPUs: 26 us + 1.5 x bytes / (0.92 x 1e11 B/s), NCCL's LL128 ring at
  0.92 of the Simple ring's rate = 52.087, 39.043, 35.783 us (BUCKET_US below).
  Overlapped: buckets end at 140 + b0 = 192.087, 140 + b0 + b1 = 231.130, 240 + b2 = 275.783 us;
  the optimizer ends at 275.783 + 42 = 317.783 us.
  Overlap off: the buckets run back to back after backward (240 us): 240 + b0 + b1 + b2 = 366.913
  us, + 42 = 408.913 us.
  Ideal network: 240 + 42 = 282 us; with m micro-batches (no_sync on all but the last):
  m x 240 + 42 us.
"""

import os
import signal
import tempfile
import threading
import time
import unittest

import clustersim

US = 1e-6
TOL = 1e-11  # times are integer picoseconds; a dozen rounded terms stay within a few ps
# The bucket all-reduces of the docstring (us): 26 us + 1.5 x bytes / (0.92 x 1e11 B/s).
BUCKET_US = [26 + 1.5 * b / 0.92e11 / US for b in (1.6e6, 0.8e6, 0.6e6)]
B0, B1, B2 = BUCKET_US
OVERLAPPED_ENDS_US = [140 + B0, 140 + B0 + B1, 240 + B2]

SCENARIOS = os.environ.get("CLUSTERSIM_SCENARIOS_DIR",
                           os.path.join(os.path.dirname(__file__), "..", "..", "scenarios"))

HAND_SCENARIO = {
    "name": "ddp-by-hand",
    "cluster": {
        "nodes": 1,
        "gpus_per_node": 4,
        "gpu": {"peak_tflops": {"bf16": 100, "fp32": 10}, "hbm_bandwidth": "1TB/s",
                "memory": "80GB", "compute_efficiency": 1, "memory_efficiency": 1,
                "launch_overhead": "0us"},
        "intra_node": {"fabric": "nvswitch", "nvlink_bandwidth": "100GB/s",
                       "nvlink_latency": "1us"},
    },
    "model": {"name": "four-layers", "layers": [
        {"name": "L0", "params": 3e5, "forward_flops": 4e9},
        {"name": "L1", "params": 4e5, "forward_flops": 1e9},
        {"name": "L2", "params": 6e5, "forward_flops": 2e9},
        {"name": "L3", "params": 2e5, "forward_flops": 1e9},
    ]},
    "training": {"global_batch": 4, "micro_batch": 1, "precision": "bf16", "optimizer": "adam"},
    "parallel": {"data_parallel": "ddp", "bucket_mb": 0.5, "overlap": True},
    "simulation": {"network_model": "analytical", "link_efficiency": {"nvlink": 1}},
}

# The same scenario as a file.
HAND_YAML_PATH = os.environ.get("CLUSTERSIM_TEST_DATA",
                                os.path.join(os.path.dirname(__file__), "..", "data"))
HAND_YAML_PATH = os.path.join(HAND_YAML_PATH, "ddp-by-hand.yaml")
with open(HAND_YAML_PATH) as f:
    HAND_YAML = f.read()

# DESIGN.md "Result JSON": the fixed top-level keys.
RESULT_KEYS = {"scenario", "world_size", "iteration_time_s", "tokens_per_s", "samples_per_s",
               "tflops_per_gpu", "mfu", "bubble_fraction", "exposed_comm_s",
               "comm_overlap_fraction", "memory", "breakdown_s", "links", "network_model",
               "simulator"}


class TempDirCase(unittest.TestCase):
    def setUp(self):
        self._dir = tempfile.TemporaryDirectory()
        self.dir = self._dir.name

    def tearDown(self):
        self._dir.cleanup()

    def write(self, name, text):
        path = os.path.join(self.dir, name)
        with open(path, "w") as f:
            f.write(text)
        return path


class RunTest(TempDirCase):
    def test_scenario_file_gives_the_hand_timeline(self):
        r = clustersim.run(HAND_YAML_PATH)
        self.assertLessEqual(RESULT_KEYS, set(r))
        self.assertEqual(r["world_size"], 4)
        self.assertAlmostEqual(r["iteration_time_s"], (240 + B2 + 42) * US, delta=TOL)
        self.assertAlmostEqual(r["exposed_comm_s"]["dp"], B2 * US, delta=TOL)
        t = r["timeline"]
        n = len(t["rank"])
        for column in t.values():
            self.assertEqual(len(column), n)
        ends = [t["end_s"][i] for i in range(n) if t["rank"][i] == 0 and t["category"][i] == "dp-comm"]
        self.assertEqual(len(ends), 3)
        for got, want in zip(ends, OVERLAPPED_ENDS_US):
            self.assertAlmostEqual(got, want * US, delta=TOL)
        kinds = {t["kind"][i] for i in range(n) if t["category"][i] == "dp-comm"}
        self.assertEqual(kinds, {"collective"})

    def test_timeline_as_numpy_arrays_or_lists(self):
        lists = clustersim.run(HAND_YAML_PATH, timeline="lists")["timeline"]
        self.assertIsInstance(lists["start_s"], list)
        with self.assertRaises(ValueError):
            clustersim.run(HAND_YAML_PATH, timeline="arrays")
        try:
            import numpy
        except ImportError:
            with self.assertRaises(ImportError):
                clustersim.run(HAND_YAML_PATH, timeline="numpy")
            self.assertIsInstance(clustersim.run(HAND_YAML_PATH)["timeline"]["end_s"], list)
            return
        arrays = clustersim.run(HAND_YAML_PATH)["timeline"]  # True: NumPy where installed
        for column, dtype in [("rank", numpy.int64), ("peer", numpy.int64), ("start_s", numpy.float64),
                              ("end_s", numpy.float64), ("flops", numpy.float64),
                              ("bytes", numpy.uint64)]:
            self.assertIsInstance(arrays[column], numpy.ndarray, column)
            self.assertEqual(arrays[column].dtype, dtype, column)
            self.assertEqual(arrays[column].tolist(), lists[column], column)
        self.assertEqual(arrays["label"], lists["label"])
        # The hand timeline, vectorised: rank 0's three bucket all-reduces.
        mask = (arrays["rank"] == 0) & (numpy.array(arrays["category"]) == "dp-comm")
        numpy.testing.assert_allclose(arrays["end_s"][mask], numpy.array(OVERLAPPED_ENDS_US) * US,
                                      rtol=0, atol=TOL)

    def test_dict_scenario_on_the_ideal_network(self):
        r = clustersim.run(HAND_SCENARIO, network="ideal", timeline=False)
        self.assertNotIn("timeline", r)
        self.assertEqual(r["network_model"], "ideal")
        self.assertAlmostEqual(r["iteration_time_s"], 282 * US, delta=TOL)
        self.assertEqual(r["exposed_comm_s"]["total"], 0.0)

    def test_override_turns_overlap_off(self):
        r = clustersim.run(HAND_SCENARIO, set={"parallel.overlap": False}, timeline=False)
        self.assertAlmostEqual(r["iteration_time_s"], (240 + B0 + B1 + B2 + 42) * US, delta=TOL)
        self.assertAlmostEqual(r["exposed_comm_s"]["dp"], (B0 + B1 + B2) * US, delta=TOL)

    def test_shipped_scenario_runs(self):
        # resnet50-ddp-dgx-a100.yaml: one DGX A100 node, 8 GPUs.
        r = clustersim.run(os.path.join(SCENARIOS, "resnet50-ddp-dgx-a100.yaml"), timeline=False)
        self.assertEqual(r["world_size"], 8)
        self.assertGreater(r["iteration_time_s"], 0.0)

    def test_result_json_file_matches_the_dict(self):
        out = os.path.join(self.dir, "result.json")
        r = clustersim.run(HAND_SCENARIO, timeline=False, json_out=out, reproducible=True)
        import json
        with open(out) as f:
            self.assertEqual(json.load(f), r)
        self.assertEqual(r["simulator"]["wall_s"], 0)


class ErrorTest(TempDirCase):
    def test_output_over_the_scenario_is_refused_before_the_run(self):
        path = self.write("ddp.yaml", HAND_YAML)
        with self.assertRaises(clustersim.OutputPathError) as caught:
            clustersim.run(path, json_out=path)
        self.assertIn("json_out", str(caught.exception))
        with open(path) as f:
            self.assertEqual(f.read(), HAND_YAML)  # untouched


    def test_unknown_key_names_file_line_and_key(self):
        text = HAND_YAML.replace("bucket_mb: 0.5", "bucket_mbb: 0.5")
        typo_line = text.splitlines().index("  bucket_mbb: 0.5") + 1
        path = self.write("bad.yaml", text)
        with self.assertRaises(clustersim.ScenarioError) as caught:
            clustersim.run(path)
        e = caught.exception
        self.assertIsInstance(e, ValueError)
        self.assertEqual(e.file, path)
        self.assertEqual(e.line, typo_line)
        self.assertEqual(e.key, "parallel.bucket_mbb")
        self.assertIn("bucket_mb", str(e))  # the nearest allowed key is suggested

    def test_bad_override_names_its_key(self):
        with self.assertRaises(clustersim.ScenarioError) as caught:
            clustersim.run(HAND_SCENARIO, set={"parallel.overlap": "sometimes"})
        self.assertEqual(caught.exception.key, "parallel.overlap")
        self.assertIn("--set parallel.overlap=sometimes", caught.exception.file)

    def test_unknown_network_model(self):
        with self.assertRaises(clustersim.ScenarioError) as caught:
            clustersim.run(HAND_SCENARIO, network="carrier-pigeon")
        self.assertEqual(caught.exception.key, "network")
        self.assertIn("analytical", str(caught.exception))

    def test_missing_file(self):
        with self.assertRaises(clustersim.ScenarioError) as caught:
            clustersim.run(os.path.join(self.dir, "absent.yaml"))
        self.assertIn("absent.yaml", caught.exception.file)


class SweepTest(unittest.TestCase):
    def test_three_micro_batch_counts(self):
        points = clustersim.sweep(HAND_SCENARIO, {"training.global_batch": [4, 8, 12]},
                                  network="ideal")
        self.assertEqual([p["point"] for p in points],
                         [{"training.global_batch": b} for b in (4, 8, 12)])
        for p, micro_batches in zip(points, (1, 2, 3)):
            self.assertAlmostEqual(p["result"]["iteration_time_s"],
                                   (micro_batches * 240 + 42) * US, delta=TOL)


    @unittest.skipUnless("simgrid" in clustersim.network_models(), "built without SimGrid")
    def test_simgrid_points_each_run_in_a_process_of_their_own(self):
        # SimGrid starts once per process: each point runs in a child. One more micro-batch adds
        # its 240 us of compute and leaves the gradient all-reduce's tail as it was.
        points = clustersim.sweep(HAND_SCENARIO, {"training.global_batch": [4, 8]},
                                  network="simgrid", timeline=False)
        first, second = (p["result"]["iteration_time_s"] for p in points)
        self.assertAlmostEqual(second - first, 240 * US, delta=TOL)
        # This process never started SimGrid, so a run here still can, and agrees.
        here = clustersim.run(HAND_SCENARIO, set={"training.global_batch": 4}, network="simgrid",
                              timeline=False)
        self.assertEqual(here["iteration_time_s"], first)


class PresetsTest(unittest.TestCase):
    def test_design_md_presets_are_listed(self):
        p = clustersim.presets()
        self.assertLessEqual({"A100-SXM4-80GB", "H100-SXM5-80GB", "V100-SXM2-32GB"}, set(p["gpus"]))
        self.assertIn("dgx-a100", p["nodes"])
        self.assertLessEqual({"resnet50", "gpt3-175b", "llama3-70b", "mixtral-8x7b"},
                             set(p["models"]))
        self.assertLessEqual({"analytical", "flow", "ideal"}, set(clustersim.network_models()))


# A run long enough to interrupt at 0.1 s: FSDP + TP 8 on 32 GPUs (about 1.5 s on a loaded 2-core
# machine; a run that ended before the signal would fail the test, not pass it).
LONG_SCENARIO = os.path.join(SCENARIOS, "llama3-70b-fsdp-tp8-4xdgx-h100.yaml")


class ConcurrencyTest(unittest.TestCase):
    def test_gil_is_released_while_simulating(self):
        done = threading.Event()
        def work():
            try:
                clustersim.run(LONG_SCENARIO, timeline=False)
            finally:
                done.set()
        worker = threading.Thread(target=work)
        worker.start()
        time.sleep(0.05)  # let the run start
        spins = 0
        while not done.is_set():  # with the GIL held by run(), this loop could not advance
            spins += 1
        worker.join()
        self.assertGreater(spins, 1000)

    @unittest.skipIf(threading.current_thread() is not threading.main_thread(),
                     "signals reach only the main thread")
    def test_ctrl_c_cancels_the_run(self):
        timer = threading.Timer(0.1, os.kill, (os.getpid(), signal.SIGINT))
        timer.start()
        started = time.monotonic()
        try:
            # Twenty iterations take about 2 s here (one takes 0.1 s, which a faster build
            # finished before the signal came): long by construction, not by today's speed.
            with self.assertRaises(KeyboardInterrupt):
                clustersim.run(LONG_SCENARIO, set={"simulation.iterations": 20}, timeline=False)
        finally:
            timer.cancel()
        self.assertLess(time.monotonic() - started, 5.0)


if __name__ == "__main__":
    unittest.main()
