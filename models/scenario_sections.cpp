// The `training`, `parallel` and `simulation` sections, and file references.
#include <algorithm>
#include <array>
#include <regex>

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

WorkloadConfig read_workload(const yaml::Value& value, const std::filesystem::path& base_dir) {
  yaml::MapReader m = value.map();
  WorkloadConfig w;
  const yaml::Value prefix =
      m.require("chakra", "the traces' prefix: PREFIX.0.et, PREFIX.1.et, ... one per rank");
  std::filesystem::path path(prefix.text());
  if (path.is_relative() && !prefix.from_override()) path = base_dir / path;
  w.chakra = path.string();
  std::error_code ec;
  if (!std::filesystem::is_regular_file(w.chakra + ".0.et", ec))
    prefix.fail("trace '" + w.chakra +
                ".0.et' not found; allowed: the prefix of one Chakra "
                "trace per rank (PREFIX.0.et, PREFIX.1.et, ...), relative paths taken from the "
                "scenario file's folder");
  if (auto x = m.get("comm_groups")) w.comm_groups = existing_file(*x, base_dir);
  m.finish();
  return w;
}

TrainingConfig read_training(const yaml::Value& value, const ModelSpec& model) {
  yaml::MapReader m = value.map();
  TrainingConfig t;
  t.global_batch = m.require("global_batch", "the samples per iteration, e.g. 1536")
                       .integer(1, limits::kGlobalBatch);
  if (auto x = m.get("micro_batch")) t.micro_batch = x->count(1, limits::kMicroBatch);
  // Transformers need a sequence length; a layer list's costs are already per sample.
  const bool needs_seq =
      std::holds_alternative<TransformerSpec>(model.body) && model.default_seq_len <= 0;
  auto seq = needs_seq ? std::optional(m.require("seq_len", "the tokens per sample, e.g. 2048"))
                       : m.get("seq_len");
  t.seq_len = seq ? seq->count(1, limits::kSeqLen) : model.default_seq_len;
  if (auto x = m.get("precision")) t.precision = x->choice(kPrecisionNames, "precision");
  if (auto x = m.get("recompute")) t.recompute = x->choice(kRecomputeNames);
  // Checked against recompute and the pipeline chunks in validate_recompute_layers.
  if (auto x = m.get("recompute_method")) {
    t.recompute_method = x->choice(kRecomputeMethodNames);
    t.recompute_method_given = true;
  }
  if (auto x = m.get("recompute_num_layers")) {
    t.recompute_num_layers = x->count(1, limits::kLayers);
    t.recompute_num_layers_given = true;
  }
  if (auto x = m.get("optimizer")) t.optimizer = x->choice(kOptimizerNames);
  if (auto x = m.get("momentum")) {
    if (t.optimizer != Optimizer::sgd)
      x->fail("momentum is SGD's; this scenario's optimizer is " +
              std::string(kOptimizerNames.name(t.optimizer)) + " (set training.optimizer: sgd)");
    t.momentum = x->number(0.0);
    if (!(t.momentum < 1.0)) x->fail("SGD's momentum is a share; allowed: 0 <= value < 1");
  }
  if (auto x = m.get("weight_decay")) t.weight_decay = x->number(0.0);
  if (auto x = m.get("attention")) {
    t.attention = x->choice(kAttentionNames);
    t.attention_given = true;
  }
  if (auto x = m.get("fused_kernels")) {
    if (x->is_map()) {  // Megatron-style code with some families eager: {rope: false, ...}
      yaml::MapReader f = x->map();
      for (const auto& [family, name] : kKernelFamilyNames.entries())
        if (auto y = f.get(name); y && !y->boolean())
          t.eager_families |= kernels::family_bit(family);
      f.finish();
    } else if (x->is_scalar() && x->text() != "true" && x->text() != "false") {
      x->fail("unknown value '" + x->text() + "'; allowed: true | false, or a map of kernel " +
              "families to true | false (" + kKernelFamilyNames.allowed(", ") +
              "), e.g. {rope: false}");
    } else {
      t.fused_kernels = x->boolean();
    }
  }
  if (auto x = m.get("gradient_accumulation_fusion")) t.gradient_accumulation_fusion = x->boolean();
  if (auto x = m.get("master_weights")) t.master_weights = x->boolean();
  if (auto x = m.get("amp")) t.amp = x->boolean();
  if (auto x = m.get("grad_reduce_dtype")) {
    const Precision p = x->choice(kPrecisionNames, "gradient dtype");
    if (p != Precision::fp32 && p != Precision::bf16 && p != Precision::fp16)
      x->fail("gradients are reduced in fp32, bf16 or fp16, not " + std::string(to_string(p)));
    t.grad_reduce_dtype = p;
  }
  if (auto x = m.get("set_to_none")) t.set_to_none = x->boolean();
  if (auto x = m.get("loss_chunks")) t.loss_chunks = x->count(1, limits::kLossChunks);
  if (auto x = m.get("optimizer_impl")) {
    t.optimizer_impl = x->choice(kOptimizerImplNames);
    t.optimizer_impl_given = true;
  } else {
    t.optimizer_impl = t.fused_kernels ? OptimizerImpl::fused : OptimizerImpl::foreach;
  }
  m.finish();
  return t;
}

ParallelConfig read_parallel(const yaml::Value& value) {
  yaml::MapReader m = value.map();
  ParallelConfig p;
  p.dp = 0;
  if (auto x = m.get("tp")) p.tp = x->count(1, limits::kParallel);
  if (auto x = m.get("pp")) p.pp = x->count(1, limits::kParallel);
  if (auto x = m.get("ep")) p.ep = x->count(1, limits::kParallel);
  if (auto x = m.get("dp")) p.dp = x->count(1, limits::kParallel);
  if (auto x = m.get("cp")) p.cp = x->count(1, limits::kParallel);
  if (auto x = m.get("cp_comm")) p.cp_comm = x->choice(kContextParallelCommNames);
  if (auto x = m.get("sequence_parallel")) p.sequence_parallel = x->boolean();
  if (auto x = m.get("fp8_comm")) p.fp8_comm = x->boolean();
  if (auto x = m.get("tp_comm_overlap")) p.tp_comm_overlap = x->boolean();
  if (auto x = m.get("tp_async_grad_reduce"))
    if (const int v = x->choice<int>({{"auto", -1}, {"true", 1}, {"false", 0}}); v >= 0)
      p.tp_async_grad_reduce = v == 1;
  if (auto x = m.get("schedule")) p.schedule = x->choice(kPipelineScheduleNames);
  if (auto x = m.get("pipeline_engine")) p.pipeline_engine = x->choice(kPipelineEngineNames);
  if (auto x = m.get("pp_send_communicator"))
    p.pp_send_communicator = x->choice(kSendCommunicatorNames);
  if (auto x = m.get("pp_p2p_overlap")) p.pp_p2p_overlap = x->choice(kP2POverlapNames);
  if (auto x = m.get("pp_scatter_gather")) p.pp_scatter_gather = x->boolean();
  if (auto x = m.get("virtual_stages")) p.virtual_stages = x->count(1, limits::kVirtualStages);
  if (auto x = m.get("microbatch_group_size"))
    p.microbatch_group = x->count(1, limits::kMicroBatches);
  if (auto x = m.get("stage_layers"))
    for (const yaml::Value& item : x->sequence())
      p.stage_layers.push_back(item.count(0, limits::kLayers));  // 0: validate_stage_layers
  if (auto x = m.get("data_parallel")) p.data_parallel = x->choice(kDataParallelNames);
  // MiB, as PyTorch's bucket_cap_mb.
  if (auto x = m.get("bucket_mb")) p.bucket_bytes = x->number(1e-6) * 1024.0 * 1024.0;
  // DeepSpeed's PipelineEngine turns the backward's all-reduce off and reduces after the
  // schedule (pipe/engine.py: enable_backward_allreduce = False): no overlap there.
  const bool deepspeed = p.pipeline_engine == PipelineEngine::deepspeed;
  if (auto x = m.get("overlap")) {
    p.overlap = x->boolean();
    if (p.overlap && deepspeed)
      x->fail(
          "DeepSpeed's pipeline engine reduces gradients after the pipeline flush, never during "
          "the backward; allowed: false, or pipeline_engine: megatron");
  } else if (deepspeed) {
    p.overlap = false;
  }
  if (auto x = m.get("gradient_as_bucket_view")) p.gradient_as_bucket_view = x->boolean();
  if (auto x = m.get("find_unused_parameters")) p.find_unused_parameters = x->boolean();
  if (auto x = m.get("static_graph")) p.static_graph = x->boolean();
  if (auto x = m.get("join")) p.join = x->boolean();
  if (auto x = m.get("fsdp")) {
    yaml::MapReader f = x->map();
    if (auto y = f.get("unit")) p.fsdp.unit_blocks = y->count(1, limits::kLayers);
    if (auto y = f.get("reshard_after_forward")) p.fsdp.reshard_after_forward = y->boolean();
    if (auto y = f.get("reshard_after_backward")) p.fsdp.reshard_after_backward = y->boolean();
    if (auto y = f.get("prefetch")) p.fsdp.prefetch = y->count(0, limits::kLayers);
    if (auto y = f.get("forward_prefetch")) p.fsdp.forward_prefetch = y->boolean();
    if (auto y = f.get("no_sync")) p.fsdp.no_sync = y->boolean();
    if (auto y = f.get("root_unit")) p.fsdp.root_unit = y->boolean();
    if (auto y = f.get("shard_group")) p.fsdp.shard_group = y->count(1, limits::kParallel);
    if (auto y = f.get("init")) p.fsdp.init = y->choice(kFsdpInitNames);
    f.finish();
  }
  if (auto x = m.get("offload")) {
    yaml::MapReader f = x->map();
    if (auto y = f.get("optimizer")) p.offload.optimizer = y->boolean();
    if (auto y = f.get("activations")) p.offload.activations = y->boolean();
    f.finish();
  }
  if (auto x = m.get("order")) {
    // cp may be listed too; left out, it goes right after tp (RankLayout).
    const std::vector<std::string> all = {"tp", "cp", "ep", "dp", "pp"};
    std::vector<std::string> order;
    for (const yaml::Value& item : x->sequence()) {
      const std::string name = item.text();
      if (std::find(all.begin(), all.end(), name) == all.end())
        item.fail_choice(name, all, "dimension");
      if (std::find(order.begin(), order.end(), name) != order.end())
        item.fail("'" + name + "' is listed twice; allowed: each of tp, cp, ep, dp, pp once");
      order.push_back(name);
    }
    const bool has_cp = std::find(order.begin(), order.end(), "cp") != order.end();
    if (order.size() != all.size() - (has_cp ? 0 : 1))
      x->fail(
          "must list each of tp, ep, dp, pp once, and cp at most once (fastest-varying first), "
          "e.g. [tp, cp, ep, dp, pp]");
    p.order = order;
  }
  m.finish();
  return p;
}

namespace {

// A SimGrid correction factor: positive, at most 100 (LV08's own latency factor is 13.01).
double factor(const yaml::Value& v) {
  const double f = v.number(0.0);
  if (!(f > 0.0 && f <= 100.0)) v.fail("a correction factor; allowed: 0 < value <= 100");
  return f;
}

}  // namespace

SimulationConfig read_simulation(const std::optional<yaml::Value>& value,
                                 const std::filesystem::path& base_dir) {
  SimulationConfig s;
  if (!value) return s;
  yaml::MapReader m = value->map();
  if (auto x = m.get("network_model")) {
    const std::string name = x->text();
    if (engine::find_network_model(name) == nullptr) {
      if (name == "simgrid")
        x->fail("the simgrid network model is not built in this version; allowed: " +
                yaml::join(engine::network_model_names(), " | "));
      x->fail_choice(name, engine::network_model_names(), "network model");
    }
    s.network_model = name;
  }
  if (auto x = m.get("iterations")) s.iterations = x->count(1, limits::kIterations);
  if (auto x = m.get("fold")) s.fold = x->choice(kFoldNames);
  if (auto x = m.get("sm_sharing")) s.sm_sharing = x->boolean();
  if (auto x = m.get("link_efficiency")) {
    yaml::MapReader table = x->map();
    for (const auto& [kind, name] : engine::kLinkKindNames.entries())
      if (auto e = table.get(name)) {
        const double f = e->number(0.0);
        if (!(f > 0.0 && f <= 1.0)) e->fail("an efficiency is a fraction; allowed: 0 < value <= 1");
        s.link_efficiency[static_cast<std::size_t>(kind)] = f;
      }
    table.finish();
  }
  if (auto x = m.get("calibration")) s.calibration = existing_file(*x, base_dir);
  if (auto x = m.get("nccl")) {
    yaml::MapReader nccl = x->map();
    // Collective channels (NCCL_MIN/MAX_NCHANNELS); unset: NCCL's rule from the topology.
    if (auto c = nccl.get("channels")) s.nccl_channels = c->count(1, 64);
    // NCCL_MIN_CTAS: a floor on every collective's channels, NVLS's included.
    if (auto c = nccl.get("min_ctas")) s.nccl_min_ctas = c->count(1, 64);
    // The NCCL the cluster runs, to compare with a calibration profile's.
    if (auto v = nccl.get("version")) {
      s.nccl_version = v->text();
      static const std::regex kVersion(R"(\d{1,3}\.\d{1,3}(\.\d{1,3})?)");
      if (!std::regex_match(s.nccl_version, kVersion))
        v->fail("'" + s.nccl_version +
                "' is not an NCCL version; allowed: MAJOR.MINOR[.PATCH], e.g. 2.21.5");
    }
    nccl.finish();
  }
  if (auto x = m.get("memory")) {
    yaml::MapReader table = x->map();
    if (auto f = table.get("fragmentation")) {
      const double v = f->number(0.0);
      if (!(v >= 0.0 && v < 1.0))
        f->fail("the fragmentation is a share of the allocator's memory; allowed: 0 <= value < 1");
      s.memory.fragmentation = v;
    }
    if (auto c = table.get("cuda_context")) s.memory.cuda_context = c->size();
    table.finish();
  }
  if (auto x = m.get("simgrid")) {
    // SimGrid's own options (docs/scenario.md): read whether or not SimGrid was built, so a
    // scenario stays valid on every machine.
    yaml::MapReader table = x->map();
    if (auto v = table.get("model")) {
      const std::string model = v->text();
      const std::vector<std::string> allowed(engine::kSimgridModels.begin(),
                                             engine::kSimgridModels.end());
      if (std::find(allowed.begin(), allowed.end(), model) == allowed.end())
        v->fail_choice(model, allowed, "SimGrid network model");
      s.simgrid.model = model;
    }
    if (auto v = table.get("bandwidth_factor")) s.simgrid.bandwidth_factor = factor(*v);
    if (auto v = table.get("latency_factor")) s.simgrid.latency_factor = factor(*v);
    if (auto v = table.get("crosstraffic")) s.simgrid.crosstraffic = v->boolean();
    table.finish();
  }
  if (auto x = m.get("algorithms")) {
    yaml::MapReader table = x->map();
    for (const auto& [type, name] : engine::kCollectiveTypeNames.entries())
      if (auto a = table.get(name))
        s.algorithms[static_cast<std::size_t>(type)] = a->choice(engine::kAlgorithmNames);
    table.finish();
  }
  m.finish();
  return s;
}

std::vector<PublishedFigure> read_published(const yaml::Value& value) {
  std::vector<PublishedFigure> out;
  for (const yaml::Value& item : value.sequence()) {
    yaml::MapReader m = item.map();
    PublishedFigure f;
    const yaml::Value metric = m.require("metric", "what the source measured, e.g. tflops_per_gpu");
    f.metric = metric.text();
    if (find_published_metric(f.metric) == nullptr) {
      std::vector<std::string> names;
      for (const auto& known : published_metrics())
        names.emplace_back(known.name);
      metric.fail_choice(f.metric, names, "metric");
    }
    f.value = m.require("value", "the published figure, a positive number").number(1e-300);
    f.source = m.require("source", "document, table and row where the figure is printed").text();
    if (auto x = m.get("url")) f.url = x->text();
    if (auto x = m.get("notes")) f.notes = x->text();
    m.finish();
    out.push_back(std::move(f));
  }
  if (out.empty()) value.fail("lists no figure; allowed: a list of {metric, value, source}");
  return out;
}

}  // namespace clustersim::models::detail
