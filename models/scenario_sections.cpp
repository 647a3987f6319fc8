// The `training`, `parallel` and `simulation` sections, and file references.
#include <algorithm>
#include <array>

#include "models/scenario_detail.hpp"

namespace clustersim::models::detail {

std::string existing_file(const yaml::Value& value, const std::filesystem::path& base_dir) {
  std::filesystem::path path(value.text());
  if (path.is_relative() && !value.from_override()) path = base_dir / path;
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec))
    value.fail("file '" + path.string() +
               "' not found; allowed: an existing file, relative paths taken from the scenario "
               "file's folder");
  return path.string();
}

TrainingConfig read_training(const yaml::Value& value, const ModelSpec& model) {
  yaml::MapReader m = value.map();
  TrainingConfig t;
  t.global_batch = m.require("global_batch", "the samples per iteration, e.g. 1536").integer(1);
  if (auto x = m.get("micro_batch")) t.micro_batch = x->count(1);
  // Transformers need a sequence length; a layer list's costs are already per sample.
  const bool needs_seq =
      std::holds_alternative<TransformerSpec>(model.body) && model.default_seq_len <= 0;
  auto seq = needs_seq ? std::optional(m.require("seq_len", "the tokens per sample, e.g. 2048"))
                       : m.get("seq_len");
  t.seq_len = seq ? seq->count(1) : model.default_seq_len;
  if (auto x = m.get("precision")) {
    const std::string name = x->text();
    const auto p = parse_precision(name);
    if (!p) x->fail_choice(name, {"fp32", "tf32", "fp16", "bf16", "fp8"}, "precision");
    t.precision = *p;
  }
  if (auto x = m.get("recompute"))
    t.recompute = x->choice<Recompute>({{"none", Recompute::none},
                                        {"selective", Recompute::selective},
                                        {"full", Recompute::full}});
  if (auto x = m.get("optimizer"))
    t.optimizer = x->choice<Optimizer>(
        {{"adam", Optimizer::adam}, {"adamw", Optimizer::adamw}, {"sgd", Optimizer::sgd}});
  if (auto x = m.get("attention")) {
    t.attention =
        x->choice<Attention>({{"standard", Attention::standard}, {"flash", Attention::flash}});
    t.attention_given = true;
  }
  if (auto x = m.get("fused_kernels")) t.fused_kernels = x->boolean();
  m.finish();
  return t;
}

ParallelConfig read_parallel(const yaml::Value& value) {
  yaml::MapReader m = value.map();
  ParallelConfig p;
  p.dp = 0;
  if (auto x = m.get("tp")) p.tp = x->count(1);
  if (auto x = m.get("pp")) p.pp = x->count(1);
  if (auto x = m.get("ep")) p.ep = x->count(1);
  if (auto x = m.get("dp")) p.dp = x->count(1);
  if (auto x = m.get("sequence_parallel")) p.sequence_parallel = x->boolean();
  if (auto x = m.get("schedule"))
    p.schedule = x->choice<PipelineSchedule>({{"gpipe", PipelineSchedule::gpipe},
                                              {"1f1b", PipelineSchedule::one_f_one_b},
                                              {"interleaved", PipelineSchedule::interleaved}});
  if (auto x = m.get("virtual_stages")) p.virtual_stages = x->count(1);
  if (auto x = m.get("stage_layers"))
    for (const yaml::Value& item : x->sequence())
      p.stage_layers.push_back(item.count(1));
  if (auto x = m.get("data_parallel"))
    p.data_parallel = x->choice<DataParallel>({{"ddp", DataParallel::ddp},
                                               {"zero1", DataParallel::zero1},
                                               {"zero2", DataParallel::zero2},
                                               {"zero3", DataParallel::zero3},
                                               {"fsdp", DataParallel::fsdp},
                                               {"hsdp", DataParallel::hsdp}});
  // MiB, as PyTorch's bucket_cap_mb.
  if (auto x = m.get("bucket_mb")) p.bucket_bytes = x->number(1e-6) * 1024.0 * 1024.0;
  if (auto x = m.get("overlap")) p.overlap = x->boolean();
  if (auto x = m.get("fsdp")) {
    yaml::MapReader f = x->map();
    if (auto y = f.get("unit")) p.fsdp.unit_blocks = y->count(1);
    if (auto y = f.get("reshard_after_forward")) p.fsdp.reshard_after_forward = y->boolean();
    if (auto y = f.get("prefetch")) p.fsdp.prefetch = y->count(0);
    if (auto y = f.get("forward_prefetch")) p.fsdp.forward_prefetch = y->boolean();
    if (auto y = f.get("shard_group")) p.fsdp.shard_group = y->count(1);
    f.finish();
  }
  if (auto x = m.get("order")) {
    const std::vector<std::string> all = {"tp", "ep", "dp", "pp"};
    std::vector<std::string> order;
    for (const yaml::Value& item : x->sequence()) {
      const std::string name = item.text();
      if (std::find(all.begin(), all.end(), name) == all.end())
        item.fail_choice(name, all, "dimension");
      if (std::find(order.begin(), order.end(), name) != order.end())
        item.fail("'" + name + "' is listed twice; allowed: each of tp, ep, dp, pp once");
      order.push_back(name);
    }
    if (order.size() != all.size())
      x->fail(
          "must list each of tp, ep, dp, pp once (fastest-varying first), e.g. "
          "[tp, ep, dp, pp]");
    p.order = order;
  }
  m.finish();
  return p;
}

SimulationConfig read_simulation(const std::optional<yaml::Value>& value,
                                 const std::filesystem::path& base_dir) {
  SimulationConfig s;
  if (!value) return s;
  yaml::MapReader m = value->map();
  if (auto x = m.get("network_model")) {
    if (x->text() == "simgrid")
      x->fail(
          "the simgrid network model is not built in this version; allowed: analytical | "
          "flow | ideal");
    s.network_model =
        x->choice<engine::NetworkModelKind>({{"analytical", engine::NetworkModelKind::analytical},
                                             {"flow", engine::NetworkModelKind::flow},
                                             {"ideal", engine::NetworkModelKind::ideal}});
  }
  if (auto x = m.get("iterations")) s.iterations = x->count(1);
  if (auto x = m.get("link_efficiency")) {
    yaml::MapReader table = x->map();
    const char* kinds[] = {"nvlink", "pcie", "ib", "ethernet", "cpu_interconnect"};
    for (std::size_t k = 0; k < std::size(kinds); ++k)
      if (auto e = table.get(kinds[k])) {
        const double f = e->number(0.0);
        if (!(f > 0.0 && f <= 1.0)) e->fail("an efficiency is a fraction; allowed: 0 < value <= 1");
        s.link_efficiency[k] = f;
      }
    table.finish();
  }
  if (auto x = m.get("calibration")) s.calibration = existing_file(*x, base_dir);
  if (auto x = m.get("algorithms")) {
    yaml::MapReader table = x->map();
    for (int i = 0; i < engine::kNumCollectiveTypes; ++i) {
      const auto type = static_cast<engine::CollectiveType>(i);
      auto a = table.get(engine::to_string(type));
      if (!a) continue;
      s.algorithms[static_cast<std::size_t>(i)] =
          a->choice<engine::Algorithm>({{"auto", engine::Algorithm::automatic},
                                        {"ring", engine::Algorithm::ring},
                                        {"tree", engine::Algorithm::tree},
                                        {"hierarchical", engine::Algorithm::hierarchical},
                                        {"direct", engine::Algorithm::direct}});
    }
    table.finish();
  }
  m.finish();
  return s;
}

}  // namespace clustersim::models::detail
