"""``audit-stubs --standins``: the fields a namespace stand-in lacks where vLLM reads them.

A table of inline cases: a tiny ``vllm/mod.py`` and a test file, and the findings of kind
``missing-field`` (error), ``missing-attribute`` (error, a namespace made ``self``) and
``possibly-missing-attribute`` (note) expected, by name.  A case that expects nothing pins
what is *not* a finding: a guarded read, a field the test sets, a real object's attribute.
"""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import attrs
import pytest

from contracts.analyzer.cases import cli
from factories.analysis.audit import StubAuditor
from factories.analysis.findings import FindingKind

ERROR, NOTE, SELF, STALE = (
    FindingKind.MISSING_FIELD,
    FindingKind.POSSIBLY_MISSING_ATTRIBUTE,
    (FindingKind.MISSING_ATTRIBUTE),
    FindingKind.STALE_FIELD,
)

BUILDER = """
class Builder:
    def build(self, metadata, common):
        n = common.num_actual_tokens
        q = metadata.prefill.query_start_loc
        return n, q

    def guarded(self, common):
        return getattr(common, "num_actual_tokens", 0)

    def deep(self, common):
        return common.tensor.shape

    def maybe(self, common, flag):
        if flag:
            return common.num_actual_tokens
        return 0

    def dims(self):
        return self.mla_dims.v_head_dim + self.mla_dims.qk_nope_head_dim

    def decode(self, x):
        return self._decode_causal, self._new_field

    def fill(self):
        self._filled = 1

    def use(self):
        return self._filled

    def gate(self):
        if self.cfg.on:
            return self.missing
        return 0

    def text_dim(self):
        return self.cfg.text.hidden

    def steps(self, n):
        for _ in range(n):
            self.tables.compute(self.groups, self.tables.inputs)
            return self.tables.cp_size
        return 0

    def concat(self, q):
        if isinstance(q, tuple):
            q = self.specs, self.rank
        return q, self.size

    def route(self, metadata, flag):
        if flag:
            return metadata.top, metadata.max_len
        return 0

    def split(self, metadata):
        decodes, prefills = metadata.num_decodes, metadata.num_prefills
        if prefills > 0:
            return self.vllm_config, self.device
        return decodes, self.size

    def concat_if(self, q):
        if q:
            q = self.specs, self.rank
        return q, self.size

    @staticmethod
    def static_build(common):
        return common.num_actual_tokens

    @classmethod
    def from_common(cls, common, flag=True):
        if flag:
            return common.num_actual_tokens
        return cls

    @property
    def total(self):
        return self.cfg.total + self._count


def build_common(common, flag=True):
    if flag:
        return common.num_actual_tokens
    return 0


def pass_on(x, meta):
    return build_common(meta.common)


def guarded_fn(common):
    if hasattr(common, "num_actual_tokens"):
        return common.num_actual_tokens
    return getattr(common, "other", 0)


def with_kwargs(*args, **kwargs):
    return kwargs["common"].num_actual_tokens


def run_later(common):
    return schedule(serve(common))


def schedule(coroutine):
    return coroutine


async def serve(common):
    return common.num_actual_tokens


async def serve_now(common):
    return await serve(common)


class Gate:
    def split(self, start, end):
        if start >= end:
            return 0
        return self.block_size, self.new_flag

    def clip(self, start, n):
        if start:
            return n
        return self.block_size + self.new_flag


def warm(runner, n):
    if n:
        return runner.size, runner.fresh
    return 0


def warm_rest(runner, n):
    if not n:
        return 0
    return runner.size, runner.fresh


def release(runner):
    return runner.instance_id


def warm_or_release(runner, n):
    if n:
        return build_or_release(runner)
    return 0


def build_or_release(runner):
    try:
        return runner.size
    except Exception:
        release(runner)
        raise


def serve_app(app):
    return app.state.args.port


def two(runner):
    return runner.a.x, runner.b.y


def clip_fn(runner, start, n):
    if start:
        return n
    return runner.size + runner.fresh


def ready(runner, n):
    if n:
        return False
    return runner.size > runner.fresh
from dataclasses import dataclass
from elsewhere import External


class Base:
    def __init__(self, config, device=None):
        self.config = config
        self.model_config = config.model_config
        self.heads = self.model_config.num_heads
        self.rank = self._rank()

    def _rank(self):
        if self.config.parallel.size > 1:
            return self.config.parallel.rank, self.device
        return 0


class Built(Base):
    def __init__(self, spec, vllm_config, device):
        super().__init__(vllm_config, device)
        self.block = spec.block_size
        self.tuned = getattr(vllm_config, "tuned", None)
        if hasattr(self.config, "extra"):
            self.extra = self.config.extra.value
        self.config = spec
        self.size = self.config.size


class Inherits(Built):
    pass


class FromOutside(External, Base):
    pass


@dataclass
class Fields(Base):
    spec: object = None


class Keeper:
    def keep(self, common):
        self.common = common
        return self._tokens()

    def _tokens(self):
        return self.common.num_actual_tokens


class Layer(External):
    def __init__(self, config):
        super().__init__()
        if self.training:
            return
        self.rank = config.parallel.rank


class Coordinator:
    def __init__(self, config, size):
        self.lookahead = config.lookahead

    @classmethod
    def from_config(cls, config):
        return config.size


class Scheduler:
    def __init__(self, vllm_config):
        self.coord = Coordinator.from_config(vllm_config)
        self.sizes = self.sizes_of(vllm_config)
        self.helper = Coordinator(vllm_config.sub, 1)

    @staticmethod
    def sizes_of(config):
        return config.block_sizes


def make(cfg):
    return Coordinator(cfg, 1)


class Gated:
    def __init__(self, cfg):
        self.mode = cfg.mode
        self.off = self.mode == "off"
        if not self.off:
            self.extra = cfg.extra


class Runner:
    def __init__(self, size):
        self.size = size

    def run(self, common):
        return self.size + self.step(common)

    def step(self, common):
        return common.num_actual_tokens

    @staticmethod
    def check(common):
        return common.num_reqs

    def run_cfg(self):
        return self.cfg.num_actual_tokens


def query_len(cfg):
    spec = getattr(cfg, "spec", None)
    if spec is None or spec.tokens is None:
        return 1
    return 1 + spec.tokens + spec.extra_slots


class SpecBase:
    def __init__(self, vllm_config):
        self.vllm_config = vllm_config


class SpecBuilder(SpecBase):
    def __init__(self, vllm_config):
        super().__init__(vllm_config)
        self.width = query_len(self.vllm_config)


class Layered:
    alignment: int = 1

    def spec(self, cfg):
        return self.alignment, cfg.size


class Reorders:
    def threshold(self):
        return query_len(self.vllm_config)


class Made:
    def __init__(self, cfg):
        self.size = cfg.size

    @classmethod
    def make(cls, cfg):
        return cls(cfg)


def make_made(cfg):
    return Made.make(cfg)


def launch(cfg, rank):
    run = cfg.needs_coord and rank == 0
    if run:
        return cfg.model.is_moe, cfg.logging
    return None


class CfgRunner:
    def init(self):
        return self.cfg.extra


def gate(runner, fallback=False):
    ready = runner.slots >= 2
    if runner.pooling or not (ready or fallback):
        return False
    return runner.budget


def drain(runner, items):
    pending = runner.size > 0
    for item in items:
        if not pending:
            return runner.spare
        pending = item
    return 0


def nested(runner):
    def key(x):
        return x

    return runner.size + runner.fresh


def by_kind(runner, meta):
    if not isinstance(meta, dict):
        return 0
    return runner.fresh


def pick(runner):
    name = runner.quant and runner.quant.name
    if name == "mx":
        return 0
    return runner.fresh


def each(runner, groups):
    total = 0
    for group in groups:
        total += runner.size
        if group:
            continue
        total += runner.fresh
    return total


def held(runner):
    if runner.cfg is None:
        return 0
    return runner.cfg.fresh


def held_other(runner):
    if runner.other is None:
        return 0
    return runner.cfg.fresh


class Params:
    pass


def validate(proc, params):
    if isinstance(params, Params):
        return proc.fresh
    return 0


class Config:
    policy = "auto"

    def runner(self):
        return self._features()

    def _features(self):
        return self.size

    def mode(self):
        return self.policy

    def guarded_mode(self):
        return getattr(self, "policy", None)

    @property
    def uses_v2(self):
        return self.runner_kind

    @property
    def runner_kind(self):
        return 2


class Client:
    def apply(self):
        config = self.vllm_config
        config.cache_config.blocks = 1
        return config.parallel_config.size


def bootstrap_addr(config):
    return config.kv_transfer_config


class Registrar:
    def register(self):
        return bootstrap_addr(self.vllm_config)

    def register_all(self, items):
        for item in items:
            build_common(item)
        return bootstrap_addr(self.vllm_config)


class Counter:
    def count(self):
        return self._count_of(False)

    def _count_of(self, on):
        if on:
            return self.size
        return 0


def spec_width(config):
    spec = config.speculative_config
    if spec is not None:
        return spec.width
    return 1


class Widths:
    def __init__(self, config):
        self.width = config.speculative_config.width


def _swap(runner):
    saved = runner.manager
    runner.manager = None
    try:
        runner.manager = None
    finally:
        runner.manager = saved


def _replace(runner):
    runner.manager = None
    saved = runner.manager
    runner.manager = saved


def warm_restored(runner):
    _swap(runner)
    return runner.manager.budget


def warm_replaced(runner):
    _replace(runner)
    return runner.manager.budget


class Drafter:
    def __init__(self, cfg):
        self.size = cfg.spec.dcp_size
        self.model = self.load(cfg)

    def load(self, cfg):
        return cfg.spec.model_path


class Engine:
    kind = "engine"
    size: int

    def __init__(self, cfg):
        self.cfg = cfg
        self.count = 0

    def run(self):
        return 1

    @property
    def busy(self):
        return False

    def total(self):
        return self.count, self.kind


class Outside(External):
    def __init__(self):
        self.count = 0


from dataclasses import field


@dataclass
class Conf:
    needed: int
    given: int = 0
    built: list = field(default_factory=list)
    chosen: int = field(default=1)


def engine_count(engine):
    return engine.count


def engine_class_level(engine):
    return engine.kind, engine.run(), engine.busy, engine.total


def engine_guarded(engine):
    return getattr(engine, "count", 0)


def engine_size(engine):
    return engine.size


def engine_deep(engine):
    return engine.kind.upper().missing


def conf_needed(conf):
    return conf.needed


def conf_built(conf):
    return conf.built


def conf_defaults(conf):
    return conf.given, conf.chosen


def held_count(holder):
    return holder.engine.count


class Heads:
    def pad(self, q):
        if isinstance(q, tuple):
            return self.specs
        return self.head_size

    def route(self):
        group = self.group
        if isinstance(group, Heads):
            return 0
        return self.fresh

    def route_proto(self):
        if isinstance(self.group, Shaped):
            return 0
        return self.fresh

    def cached(self, n):
        cache = None
        if n:
            cache = n
        if cache is not None:
            return 0
        return self.fresh


import typing


class Shaped(typing.Protocol):
    size: int


def is_decode(meta):
    # a pure decode batch
    return meta is not None and meta.num_decode == meta.num_actual


class Handle:
    def prepare(self, meta):
        self.decode = is_decode(meta)
        if self.decode or self.runtime.width:
            return 0
        return 1


def _steps(runner):
    return None


def stepped_budget(runner):
    _steps(runner)
    return runner.budget


def spec_reason(config):
    spec = config.spec
    if spec is not None:
        return spec.reason
    return None


def extra_of(config):
    return config.extra


def fill_extra(config):
    config.extra = 1


class WidthEngine:
    def __init__(self, config):
        self.width = config.width


def make_engine(config):
    return WidthEngine(config)


def drafts(runner):
    spec = runner.spec
    if spec is not None:
        return runner.max_reqs
    return 0


def cache_row(layer):
    if layer.dtype == "packed":
        return layer.impl
    return 0


def auto_of(cfg):
    if cfg.numa:
        return cfg.auto
    return None


class Capturer:
    def capture(self):
        if self.manager.needs():
            return self.manager.stream
        return None


def get_layers(config):
    return {}


def layer_specs(config):
    layers = get_layers(config)
    out = {}
    for name, layer in layers.items():
        if layer.shared_with:
            continue
        out[name] = layer.spec
    return out


def stale_reads(cfg):
    return cfg.used


def stale_branch(cfg, flag=False):
    if flag:
        return cfg.rare
    return cfg.used


_KEPT = None


def stale_keeps(cfg):
    global _KEPT
    _KEPT = cfg
    return cfg.used


def stale_vars(cfg):
    return dict(vars(cfg))


def stale_passes(cfg):
    return stale_reads(cfg)


def stale_returns(cfg):
    return cfg


class StaleKeeper:
    def __init__(self, cfg):
        self.cfg = cfg


def stale_nested(cfg):
    return cfg.model.dtype


def stale_named(cfg, name):
    return getattr(cfg, name)


def stale_local(cfg):
    model = cfg.model
    return model.dtype


from elsewhere import traced  # noqa: E402  (a decorator outside the tree)


@traced
def stale_decorated(cfg):
    return cfg.used


def read_b(runner):
    return runner.b


def fill_b(runner):
    runner.b = 1


def gated_read(runner):
    if runner.cfg.on:
        return runner.extra
    return 0


def probe_then_read(out):
    state = getattr(out, "block_state", None)
    ids = out.block_state.ids
    return state, ids


def probe_only(out):
    state = getattr(out, "block_state", None)
    if state is not None:
        return state.ids
    return None


class Impl:
    def forward(self, x):
        return self._inner(x)

    def _inner(self, x):
        return self.width


def set_named(obj, name, value):
    setattr(obj, name, value)


class Refill:
    def build(self):
        set_named(self, "weight", 1)

    def build_other(self):
        set_named(self, "other", 1)

    def use(self):
        return self.weight


def cfg_size(cfg):
    return cfg.parallel.size


def sized_client(cfg):
    return cfg_size(cfg)


class FwdBase:
    def __init__(self, spec, cfg):
        self.width = cfg.spec.width


class Fwd(FwdBase):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)


class Caller:
    def __call__(self, layer):
        return layer.attn.depth


class ExtWrap:
    def __init__(self, *args, **kwargs):
        External(*args, **kwargs)


def dispatch(n):
    return n


class Proposer:
    def propose(self):
        n = self.tables.block_sizes
        for group in self.groups:
            dispatch(group)
        return n, self.tables.after


def fetch(runner):
    runner.start()
    return runner.size


class Kind:
    TRITON = 1
    FLASH = 2


class Modes:
    def by_backend(self):
        if self.cfg.backend == Kind.FLASH:
            return self.cfg.flash_only
        return 0

    def pick(self):
        if self.cfg.mode == "b":
            return self.cfg.b_only
        return 0


def slots(config):
    spec = getattr(config, "spec", None)
    if spec is None or spec.tokens is None:
        return 1
    return spec.tokens + spec.extra_slots


def rewrite(cfg):
    cfg.mode = "on"
    if cfg.mode == "off":
        return cfg.off_only
    return cfg.on_only


def maybe_rewrite(cfg, flag):
    if flag:
        cfg.mode = "x"
    if cfg.size == 0:
        return 0
    return cfg.rest


def maybe_resize(cfg, flag):
    if flag:
        cfg.size = 1
    if cfg.size == 0:
        return 0
    return cfg.rest


def draft_load(config):
    spec = config.spec
    if spec is not None and spec.draft_load is not None:
        return spec.draft_load
    return config.load.load_format


def device_of(config):
    return config.load.device or config.device_cfg.device


class Window:
    def gather(self, batch):
        window = self.lookback
        if window is None:
            return 0
        return batch.positions


def gather_buf(runner, batch):
    if runner.buf is None:
        return 0
    return batch.positions


class Indexer:
    def forward(self, out):
        metadata = self._metadata()
        if metadata is None:
            return out
        return self.dtype


AUTO, FAST = "auto", "fast"


def backend_of(cfg):
    extra = cfg.extra
    return extra.get("backend", AUTO) if isinstance(extra, dict) else AUTO


def pick_backend(cfg):
    if backend_of(cfg) == AUTO:
        return None
    return cfg.fast_only


def woken(cfg, tags):
    wake = tags is None or "weights" in tags
    if wake and cfg.flag:
        return cfg.weights_only
    return 0


class Runs:
    def run(self):
        self.step()
        return self.size


class Server:
    async def serve(self, request):
        error = await self._check(request)
        if error is not None:
            return error
        return self.client.admit


class HeldConfig:
    def __init__(self):
        self.model_config = None


class Platform:
    @classmethod
    def check_config(cls, vllm_config):
        model_config = vllm_config.model_config
        if model_config is not None:
            model_config.cascade = True
        return model_config is not None and getattr(model_config.hf_config, "kind", 0) == 1

class Drafting:
    def dummy(self):
        if self.speculator is not None:
            return self.spec_config.slots
        return 0


class Stepper:
    def step(self, flag):
        if flag:
            raise ValueError("flag")
        n = self.size
        self.hook()
        return n + self.after


class Mixer:
    def forward(self, q, metadata):
        if metadata.mixed:
            return q + self.mix_scale
        return q


def covered(md, cache):
    if cache is not None:
        n = md.decode_tokens
        if n:
            return n
    return md.decode_tokens + md.total


def uncovered(md, cache):
    if cache is not None:
        if cache.ready:
            return cache.size
        n = md.decode_tokens
    return md.decode_tokens + md.total



import copy  # noqa: E402


class CopyingDrafter:
    def __init__(self, vllm_config):
        dcp = vllm_config.speculative_config.dcp_size
        if dcp and dcp != vllm_config.parallel_config.dcp_size:
            vllm_config = copy.copy(vllm_config)
            vllm_config.parallel_config = None
        self.vllm_config = vllm_config
        if vllm_config.parallel_config.use_ubatching:
            self.microbatched = True


class EveryArmDrafter:
    def __init__(self, vllm_config, fallback):
        if vllm_config.speculative_config.dcp_size:
            vllm_config = copy.copy(vllm_config)
        else:
            vllm_config = fallback
        self.microbatched = vllm_config.parallel_config.use_ubatching


class LoopDrafter:
    def __init__(self, vllm_config, others):
        if vllm_config.speculative_config.dcp_size:
            for vllm_config in others:
                pass
        self.microbatched = vllm_config.parallel_config.use_ubatching


class EngineProc:
    @staticmethod
    def run_engine(*args, rank=0, **kwargs):
        vllm_config = kwargs["vllm_config"]
        return vllm_config.watchdog_config


import dataclasses  # noqa: E402


@dataclasses.dataclass(frozen=True)
class RefusalSpec:
    last_layer: int = 0

    def refusal_reasons(self, config):
        return config.kernel_config.moe_backend


REFUSAL_SPEC = RefusalSpec()


def refusals_of_a_copy(config):
    spec = dataclasses.replace(REFUSAL_SPEC, last_layer=1)
    return spec.refusal_reasons(config)


def refusals_of_a_reassigned_spec(config, other):
    spec = RefusalSpec()
    if other:
        spec = other
    return spec.refusal_reasons(config)


class InnerConfig:
    def __init__(self):
        self.text = None


class OuterConfig:
    def __init__(self):
        self.model_config = InnerConfig()


def read_text(vllm_config):
    return vllm_config.model_config.text.topk


class MadeBuilder:
    def __init__(self, spec, vllm_config):
        self.topk = vllm_config.topk


class MadeBackend:
    @staticmethod
    def get_builder_cls():
        return MadeBuilder

    @staticmethod
    def get_builder():
        return MadeBuilder(None, None)


class Coordinated:
    def __init__(self, coord):
        self.size = coord.size


class Holds:
    def __init__(self):
        self.cfg = None

    def width(self):
        return self.cfg.width


class Stores:
    def __init__(self, coord, scale=1):
        self.scale = scale
        self.coord = coord

    def span(self):
        return self.coord.width * self.scale


class StoresACopy:
    def __init__(self, coord):
        self.coord = copy_of(coord)

    def span(self):
        return self.coord.width


class StoresOnOnePath:
    def __init__(self, coord, keep=False):
        self.coord = None
        if keep:
            self.coord = coord

    def span(self):
        return self.coord.width


class StoresAndFills:
    def __init__(self, coord):
        self.coord = coord
        self.coord.width = 1

    def span(self):
        return self.coord.width


def copy_of(coord):
    return coord


def span_of(coord):
    return coord.width


class DraftLoader:
    def load(self):
        first = self.model.layers[0]
        return first.ffn.use_mega


class Cached:
    def cache(self, i):
        return self.caches[i]

    def convert(self, i):
        handle = self.cache(i)
        return handle.runtime.rows


class Stacked:
    def total(self):
        n = 0
        for i, layer in enumerate(self.layers):
            n += layer.width
        return n


def commit_layers(layers):
    if not layers:
        raise ValueError("no layers")
    return [layer.records.key for layer in layers]


class Slot:
    def __init__(self, **fields):
        self.__dict__.update(fields)


class Fp8:
    @classmethod
    def get_name(cls):
        return "fp8"


class Mx:
    @classmethod
    def get_name(cls):
        return "mxfp4"


class SizedFp8(Fp8):
    def __len__(self):
        return 0


class Loads:
    def __init__(self, quant, manager):
        self.quant = quant
        self.manager = manager
        self.weight = Slot(weight_loader=self.weight_loader)

    def weight_loader(self, param, value):
        name = self.quant and self.quant.get_name()
        if name == "mxfp4":
            return value
        return self.manager.shared + value


class LoadsAgain(Loads):
    def requantize(self, quant):
        self.quant = quant


class KeepsLoader:
    def __init__(self, quant, manager):
        self.quant = quant
        self.manager = manager
        self.weight = Slot(loader=print)

    def weight_loader(self, param, value):
        return self.manager.shared + value


def fill_size(runner):
    runner.size = 1


_KEPT_RUNNERS = []


def keep_runner(runner):
    _KEPT_RUNNERS.append(runner)
    return runner.instance_id


def set_flag_named(runner, name):
    setattr(runner, name, 1)


def fetch_if(runner, flag):
    if flag:
        return runner.size
    return 0


def fill_common(meta):
    meta.common.num_actual_tokens = 1


def reset_meta(meta):
    meta.reset()


def swap_common(meta):
    meta.common = None


def fetch_on(runner):
    if runner.on:
        return runner.size
    return 0


def get_config():
    return None


def configured(common):
    config = get_config()
    return common.num_actual_tokens + config.max_tokens + get_config().min_tokens


def layer_kinds(config):
    layers = get_layers(config)
    return any(layer.kind == 1 for layer in layers.values())


def group_windows(spec):
    return [group.window for group in spec.groups]


import enum


class Support(enum.Enum):
    SINGLE = 1
    UNIFORM = 2


class ThresholdBase:
    support = Support.SINGLE
    threshold: int = 1

    def __init__(self, cfg):
        self.cfg = cfg
        self.tokens = cfg.spec.num_tokens
        spec_as_decode = self.support != Support.SINGLE
        self._init_threshold(self.threshold, spec_as_decode)

    def _init_threshold(self, threshold, spec_as_decode):
        self.threshold = threshold
        if self.threshold is not None and spec_as_decode:
            self.threshold = widest_query(self.cfg)


def widest_query(cfg):
    return 1 + cfg.spec.num_tokens + cfg.spec.new_slots


class UniformThreshold(ThresholdBase):
    support = Support.UNIFORM


class StoredThreshold(ThresholdBase):
    support = Support.UNIFORM

    def __init__(self, cfg):
        self.threshold = cfg.limit
        super().__init__(cfg)


def shard_nodes(parallel):
    if parallel.backend not in ("ray", "external_launcher"):
        return parallel.world_size
    return 0


class WidthBase:
    def __init__(self, cfg, device=None):
        self.width = cfg.spec.width
        if cfg.on:
            self.extra = cfg.spec.extra


class ForwardsAll(WidthBase):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)


class ForwardsAfterPop(WidthBase):
    def __init__(self, *args, **kwargs):
        kwargs.pop("device", None)
        super().__init__(*args, **kwargs)


def warmup_keys(cfg):
    ratios = tuple(r for r in cfg.ratios if r > 1)
    if not ratios:
        return []
    parallel = cfg.parallel
    return [(r, parallel.size) for r in ratios]


class Finisher:
    def finish(self, request):
        params = request.params
        if params.get("prefill"):
            return self.remote
        if not params.get("decode"):
            return None
        return self.remote


class Pending:
    def first(self, out):
        for rid in out.ids:
            held = self.reqs.get(rid)
            req = held[0]
            blocks = held[1]
            blocks.append(req.prompt_len)
        return 0

    def each(self):
        for rid, (req, blocks) in self.reqs.items():
            blocks.append(req.prompt_len)
        return 0

    def add(self, rid, req):
        self.reqs[rid] = (req, [])

    def pair_read(self):
        first, rest = self.pair
        return rest.append, self.pair[1].append, first.prompt_len


class ExpertLoader:
    def load(self):
        name = self.quant and self.quant.get_name()
        if name == "packed":
            return None
        return self.cfg.experts


def layer_kinds_on(config):
    layers = get_layers(config)
    return any(layer.kind == 1 for layer in layers.values() if layer.on)


class Sized:
    @classmethod
    def width(cls, cfg):
        return cfg.spec.size * cfg.spec.depth


class Other:
    @classmethod
    def width(cls, cfg):
        return 0


def spec_size(cfg):
    return cfg.spec.size


def fill_depth(cfg):
    cfg.spec.depth = cfg.spec.size


def spec_area(cfg):
    return cfg.spec.size * cfg.spec.depth


def make_kernel(cfg):
    return None


class Method:
    def __init__(self, cfg):
        self.cfg = cfg

    def load(self):
        self.kernel = make_kernel(self.cfg)
        self.kernel.experts.keep(self.cfg)
        return self.kernel.experts.run



from os import sep as platform


class Placed:
    def __init__(self):
        self.on = platform.is_cuda()
        self.device = platform.current_device()


def placed_name(platform):
    return platform.name


class BaseRunner:
    def __init__(self):
        self.transform = None


class TailRunner(BaseRunner):
    def __init__(self):
        super().__init__()
        self.width = self.transform.up.width


def keep_with(make_kernel):
    return make_kernel().experts.keep


def keep_through(cfg):
    return make_kernel(cfg).experts.keep



def pair_of(x):
    first, rest = x.pair
    return rest.append, x.pair[1].append, first.prompt_len


class RoleGate:
    def build(self, out):
        if self.role == "consumer":
            return None
        return out.width

    def tracked(self, out):
        held = self.trackers.get(out.rid)
        if held is None:
            return None
        return out.width


def found_fn(runner, n):
    if n:
        return None
    return runner.size + runner.fresh


class Planner:
    def plan(self, n):
        if n:
            return None
        return self.runner.prefix


def collect_layers(layers):
    return [layer.records.key for layer in layers]


def drain_layers(layers):
    if not layers:
        raise ValueError("no layers")
    layers.clear()
    return [layer.records.key for layer in layers]


class RoleConnector:
    def __init__(self, vllm_config):
        role = vllm_config.transfer.role
        self.role = role
        self.idle = self.role == "consumer"
        if self.idle:
            return
        self.width = vllm_config.width


class TailReq:
    def __init__(self, tail=False):
        self.tail = tail


def tail_puts(coord, req):
    size = coord.size
    if not req.tail:
        return []
    return coord.lookahead + size


class TailHolder:
    def __init__(self, req=None):
        self.req = req


def held_tail_puts(coord, holder):
    return tail_puts(coord, holder.req)

class QuantGate:
    def get_quant(self):
        return make_quant()

    def load(self):
        self.quant = self.get_quant()
        if self.quant is not None:
            self.kernel = make_kernel(self.quant)
            self.kernel.experts.keep(self.quant)


def make_quant():
    return None


class FreshBase:
    def __init__(self, cfg):
        self.cfg = cfg
        self.kernel = None

    def setup(self):
        if self.kernel is None:
            self.kernel = make_kernel(self.cfg)
            self.kernel.experts.keep(self.cfg)
        return self.kernel.experts.run


class FreshMethod(FreshBase):
    def __init__(self, cfg):
        super().__init__(cfg)


class FreshReset(FreshBase):
    def __init__(self, cfg):
        super().__init__(cfg)
        self.reset()

    def reset(self):
        self.kernel = make_kernel(self.cfg)



class ReadySync:
    def apply(self, payload):
        cfg = self.cfg
        response = payload or None
        cfg.cache.seen = True
        if response is None:
            return
        cfg.cache.size = response
        return cfg.parallel.rank


class FallbackLoader:
    def __init__(self, fallback):
        self.fallback = fallback

    def load(self, cfg):
        try:
            return self.build(cfg)
        except Exception:
            if not self.fallback:
                raise
        return cfg.disk.path

    def load_or_note(self, cfg):
        try:
            self.build(cfg)
        except Exception:
            if not self.fallback:
                raise
        return cfg.disk.path

    def build(self, cfg):
        return cfg.name


@dataclass
class Planned:
    persistent: bool = False
    fix: bool = False


@dataclass
class Hooked:
    persistent: bool = False
    fix: bool = False

    def __post_init__(self):
        self.persistent = not self.persistent


class PersistencePlanner:
    def plan(self, ready):
        persistent = False
        if ready:
            persistent = True
        plan = Planned(persistent=persistent, fix=persistent and self.width > 1)
        return plan

    def hooked(self, ready):
        persistent = False
        if ready:
            persistent = True
        return Hooked(persistent=persistent, fix=persistent and self.width > 1)


class Routed:
    def forward(self, md, route):
        if route == "segmented":
            verify = md.verify
            assert verify is not None
            return verify.rows
        return md.heads


class CaseBoundPlanner:
    @classmethod
    def case_bound(cls, cfg, wide):
        if not wide:
            return None
        return 1 + cfg.spec.width_slots


class HeldExperts:
    @property
    def unquantized(self):
        return not self.moe_config.mori

    def convert_rows(self, index, md):
        cache = self.pick_cache(index)
        if md.n > cache.runtime.rows:
            return 0
        return 1

    def pick_cache(self, index):
        return self.caches[index]


def held_mode(experts):
    fused = getattr(experts, "fused", None)
    if not isinstance(fused, HeldExperts):
        return 0
    if not fused.unquantized:
        return 1
    return 2


class HeldImpl:
    def decode_rows(self, md):
        return self.group.convert_rows(self.index, md)


import contextlib  # noqa: E402

_CURRENT_HOLDER = None


@contextlib.contextmanager
def holding_current(cfg):
    global _CURRENT_HOLDER
    _CURRENT_HOLDER = cfg
    yield
    _CURRENT_HOLDER = None


@dataclass
class KeptReq:
    name: str
    can_save: bool = False
    block: object = None


class KeptMeta:
    def __init__(self):
        self.requests = []

    def add_request(self, req):
        self.requests.append(req)


class KeptScheduler:
    def build_meta(self, out):
        meta = KeptMeta()
        for name in out.names:
            meta.add_request(KeptReq(name, can_save=self.saving))
        self._apply_saves(meta, out)
        self._count_saves(meta)
        return meta

    def build_then_flip(self, out):
        meta = KeptMeta()
        for name in out.names:
            meta.add_request(KeptReq(name))
        self._apply_saves(meta, out)
        self._flip_saves(meta)
        return meta

    def _apply_saves(self, meta, out):
        kept = [r for r in meta.requests if r.can_save]
        if not kept:
            return
        table = out.table
        for r in kept:
            r.block = table.get(r.name)

    def _count_saves(self, meta):
        self.saved = 0
        for r in meta.requests:
            if r.can_save:
                self.saved += 1

    def _flip_saves(self, meta):
        for r in meta.requests:
            r.can_save = True


class MockRouted:
    def rows(self, i):
        return self.caches[i]

    def convert_rows(self, n, md):
        cache = self.rows(0)
        if n > cache.runtime.limit:
            return self._convert_mocked(md.wide, 0)
        return cache.swap(md.narrow)

    def convert_or_relay(self, n, md):
        cache = self.rows(0)
        if n > cache.runtime.limit:
            return self._convert_mocked(md.wide, 0)
        return self.relay_mocked(md)

    def relay_mocked(self, md):
        return self._convert_mocked(md.narrow, 0)

    def _convert_mocked(self, a, b):
        return a


class RecvSettler:
    def settle_recv(self, request):
        failed = request.rid in self.failed_rids
        if failed:
            return self.retry_budget
        return self.window_tokens

    def settle_marked(self, request):
        self.failed_rids.add(request.rid)
        if request.rid not in self.failed_rids:
            return self.window_tokens
        return self.retry_budget

    def settle_each(self, requests):
        for request in requests:
            if request.rid in self.failed_rids:
                return self.retry_budget
            self.failed_rids.add(request.rid)
        return self.window_tokens


def build_tower(n, factory, prefix=""):
    return [factory(f"{prefix}.{i}") for i in range(n)]


class TowerLayer:
    def __init__(self, cfg, prefix):
        self.width = cfg.layer_width


class Tower:
    def __init__(self, *, cfg):
        self.n = cfg.depth
        self.layers = build_tower(cfg.depth, lambda prefix: TowerLayer(cfg, prefix), prefix="l")


def mono_spec(config):
    if not config.kernel.mono:
        return None
    return config.refusals


class MonoTop:
    def __init__(self, *, vllm_config):
        self.spec = mono_spec(vllm_config)


def mono_flip(config):
    config.kernel.mono = not config.kernel.mono


class PerTestHeld:
    def read_left(self):
        return self.held.left

    def read_right(self):
        return self.held.right

    def read_gated(self):
        if self.held.gate:
            return self.held.left
        return 0


def hop_mode_check(config):
    return config.hop_mode


def hop_mode_resolve(config):
    return hop_mode_check(config)


class HopBase:
    def __init__(self, cfg):
        self.kind = cfg.hop_kind
        self.mode = hop_mode_resolve(cfg)


class HopLeaf(HopBase):
    def __init__(self, cfg):
        super().__init__(cfg)


class KwRunner:
    @staticmethod
    def run(*args, rank=0, **kwargs):
        cfg = kwargs["cfg"]
        many = cfg.kw_par.size > 1 or rank > 0
        if many:
            return cfg.kw_deep
        return 0


def rr_setup():
    return None


class RaiseRunner:
    @staticmethod
    def run(cfg):
        rr_setup()
        many = cfg.rr_par.size > 1
        if many:
            return cfg.rr_deep
        raise SystemExit(0)
"""


@attrs.frozen
class Case:
    id: str
    test: str
    expected: frozenset[tuple[FindingKind, str]]


HEAD = "from types import SimpleNamespace\nfrom vllm.mod import Builder\n\n"

CASES = [
    Case(
        "argument-of-a-stub-method",
        """
        def test_x():
            b = object.__new__(Builder)
            metadata = SimpleNamespace(prefill=SimpleNamespace(query_start_loc=1))
            common = SimpleNamespace(query_start_loc_cpu=0)
            b.build(metadata, common)
        """,
        frozenset({(ERROR, "common.num_actual_tokens")}),
    ),
    Case(
        "nested-namespace-lacks-the-link",
        """
        def test_x():
            b = object.__new__(Builder)
            metadata = SimpleNamespace(prefill=SimpleNamespace(max_query_len=1))
            common = SimpleNamespace(num_actual_tokens=0)
            b.build(metadata, common)
        """,
        frozenset({(ERROR, "metadata.prefill.query_start_loc")}),
    ),
    Case(
        "field-of-a-stub",
        """
        def test_x():
            b = object.__new__(Builder)
            b.mla_dims = SimpleNamespace(v_head_dim=1)
            b.dims()
        """,
        frozenset({(ERROR, "self.mla_dims.qk_nope_head_dim")}),
    ),
    Case(
        "made-self",
        """
        def test_x():
            ns = SimpleNamespace(_decode_causal=True)
            Builder.decode(ns, 1)
        """,
        frozenset({(SELF, "_new_field")}),
    ),
    Case(
        "guarded-by-getattr-default",
        """
        def test_x():
            b = object.__new__(Builder)
            b.guarded(SimpleNamespace(other=1))
        """,
        frozenset(),
    ),
    Case(
        "fields-the-namespace-sets",
        """
        def test_x():
            b = object.__new__(Builder)
            b.mla_dims = SimpleNamespace(v_head_dim=1, qk_nope_head_dim=2)
            b.dims()
        """,
        frozenset(),
    ),
    Case(
        "a-real-object-in-a-field",
        """
        def test_x(t):
            b = object.__new__(Builder)
            b.deep(SimpleNamespace(tensor=t))
        """,
        frozenset(),
    ),
    Case(
        "made-self-of-a-method-that-fills-it-first",
        """
        def test_x():
            ns = SimpleNamespace(other=1)
            Builder.fill(ns)
            Builder.use(ns)
        """,
        frozenset(),
    ),
    Case(
        "made-self-a-nested-literal-decides-the-branch",
        """
        def test_x():
            ns = SimpleNamespace(cfg=SimpleNamespace(on=False))
            Builder.gate(ns)
        """,
        frozenset(),
    ),
    Case(
        "one-of-several-parametrized-namespaces-has-it",
        """
        import pytest

        @pytest.mark.parametrize(
            "common",
            [SimpleNamespace(num_actual_tokens=1), SimpleNamespace(other=2)],
        )
        def test_x(common):
            b = object.__new__(Builder)
            b.guarded(common)
            b.build(SimpleNamespace(prefill=SimpleNamespace(query_start_loc=1)), common)
        """,
        frozenset(),
    ),
    Case(
        "a-field-set-later-through-a-chain",
        """
        def test_x():
            b = object.__new__(Builder)
            b.cfg = SimpleNamespace(vision=1)
            b.cfg.text = SimpleNamespace(hidden=8)
            b.text_dim()
        """,
        frozenset(),
    ),
    Case(
        "a-namespace-handed-to-earlier-code-may-be-filled-in",
        """
        def test_x():
            b = object.__new__(Builder)
            common = SimpleNamespace(other=1)
            b.guarded(common)
            b.maybe(common, True)
        """,
        frozenset(),
    ),
    Case(
        "every-parametrized-namespace-lacks-it",
        """
        import pytest

        @pytest.mark.parametrize("common", [SimpleNamespace(x=1), SimpleNamespace(other=2)])
        def test_x(common):
            b = object.__new__(Builder)
            b.build(SimpleNamespace(prefill=SimpleNamespace(query_start_loc=1)), common)
        """,
        frozenset({(ERROR, "common.num_actual_tokens")}),
    ),
    Case(
        "made-self-a-nested-literal-takes-the-branch",
        """
        def test_x():
            ns = SimpleNamespace(cfg=SimpleNamespace(on=True))
            Builder.gate(ns)
        """,
        frozenset({(SELF, "missing")}),
    ),
    Case(
        "an-uncertain-read-is-a-note",
        """
        def test_x(flag):
            b = object.__new__(Builder)
            b.maybe(SimpleNamespace(other=1), flag)
        """,
        frozenset({(NOTE, "common.num_actual_tokens")}),
    ),
    Case(
        "the-root-of-a-chain-set-alone-does-not-prepare-a-block-for-its-links",
        """
        def test_x(n):
            b = object.__new__(Builder)
            b.tables = SimpleNamespace(other=[])
            b.groups = []
            b.steps(n)
        """,
        frozenset(
            {
                (NOTE, "self.tables.compute"),
                (NOTE, "self.tables.inputs"),
                (NOTE, "self.tables.cp_size"),
            }
        ),
    ),
    Case(
        "a-link-the-namespace-holds-prepares-its-block",
        """
        def test_x(n):
            b = object.__new__(Builder)
            b.tables = SimpleNamespace(inputs=[])
            b.groups = []
            b.steps(n)
        """,
        frozenset({(ERROR, "self.tables.compute"), (ERROR, "self.tables.cp_size")}),
    ),
    Case(
        "a-type-test-arm-is-not-prepared-by-the-fields-it-reads",
        """
        def test_x(t):
            Builder.concat(SimpleNamespace(rank=1, size=2), t)
        """,
        frozenset({(NOTE, "specs")}),
    ),
    Case(
        "a-field-missing-past-the-type-test-is-an-error",
        """
        def test_x(t):
            Builder.concat(SimpleNamespace(rank=1), t)
        """,
        frozenset({(NOTE, "specs"), (SELF, "size")}),
    ),
    Case(
        "a-value-test-arm-is-prepared-by-the-fields-it-reads",
        """
        def test_x(t):
            Builder.concat_if(SimpleNamespace(rank=1, size=2), t)
        """,
        frozenset({(SELF, "specs")}),
    ),
    Case(
        "a-field-the-test-may-delete-prepares-no-block",
        """
        def test_x(flag):
            b = object.__new__(Builder)
            metadata = SimpleNamespace(top=1)
            if not flag:
                del metadata.top
            b.route(metadata, flag)
        """,
        frozenset({(NOTE, "metadata.max_len")}),
    ),
    Case(
        "a-field-the-test-keeps-prepares-its-block",
        """
        def test_x(flag):
            b = object.__new__(Builder)
            metadata = SimpleNamespace(top=1)
            b.route(metadata, flag)
        """,
        frozenset({(ERROR, "metadata.max_len")}),
    ),
    Case(
        # A test may take the early return on purpose (a skip test whose other fields are
        # traps, a helper shared with tests that go on): past it, reads stay notes.
        "made-self-a-read-past-an-undecided-early-return-stays-a-note",
        """
        from vllm.mod import Gate
        def test_x(s, e):
            Gate.split(SimpleNamespace(block_size=16), s, e)
        """,
        frozenset({(NOTE, "new_flag")}),
    ),
    Case(
        "made-self-an-early-return-the-test-s-assertion-rules-out-is-not-its-path",
        """
        from vllm.mod import Gate
        def test_x(s):
            assert Gate.clip(SimpleNamespace(block_size=16), s, 8) == 24
        """,
        frozenset({(SELF, "new_flag")}),
    ),
    Case(
        "made-self-an-early-return-of-the-asserted-value-may-be-its-path",
        """
        from vllm.mod import Gate
        def test_x(s):
            assert Gate.clip(SimpleNamespace(block_size=16), s, 8) == 8
        """,
        frozenset({(NOTE, "new_flag")}),
    ),
    Case(
        "handed-an-early-return-the-test-s-assertion-rules-out-is-not-its-path",
        """
        import vllm.mod as mod
        def test_x(s):
            assert mod.clip_fn(SimpleNamespace(size=1), s, 8) == 9
        """,
        frozenset({(ERROR, "runner.fresh")}),
    ),
    Case(
        "handed-an-early-return-with-no-assertion-on-the-result-stays-undecided",
        """
        import vllm.mod as mod
        def test_x(s):
            mod.clip_fn(SimpleNamespace(size=1), s, 8)
        """,
        frozenset({(NOTE, "runner.fresh")}),
    ),
    Case(
        "handed-an-early-false-the-test-asserts-true-is-not-its-path",
        """
        import vllm.mod as mod
        def test_x(n):
            assert mod.ready(SimpleNamespace(size=1), n)
        """,
        frozenset({(ERROR, "runner.fresh")}),
    ),
    Case(
        "handed-an-early-false-the-test-asserts-false-may-be-its-path",
        """
        import vllm.mod as mod
        def test_x(n):
            assert not mod.ready(SimpleNamespace(size=1), n)
        """,
        frozenset({(NOTE, "runner.fresh")}),
    ),
    Case(
        "handed-a-block-that-alone-reads-fields-the-namespace-holds-is-prepared",
        """
        import vllm.mod as mod
        def test_x(n):
            mod.warm(SimpleNamespace(size=1), n)
        """,
        frozenset({(ERROR, "runner.fresh")}),
    ),
    Case(
        "handed-a-block-no-field-prepares-stays-a-note",
        """
        import vllm.mod as mod
        def test_x(n):
            mod.warm(SimpleNamespace(other=1), n)
        """,
        frozenset({(NOTE, "runner.size"), (NOTE, "runner.fresh"), (STALE, "other")}),
    ),
    Case(
        "handed-a-read-past-an-undecided-early-return-stays-a-note",
        """
        import vllm.mod as mod
        def test_x(n):
            mod.warm_rest(SimpleNamespace(size=1), n)
        """,
        frozenset({(NOTE, "runner.fresh")}),
    ),
    Case(
        "handed-a-read-in-a-handler-of-a-prepared-block-stays-a-note",
        """
        import vllm.mod as mod
        def test_x(n):
            mod.warm_or_release(SimpleNamespace(size=1), n)
        """,
        frozenset({(NOTE, "runner.instance_id")}),
    ),
    Case(
        "made-self-a-built-argument-s-field-decides-the-branch",
        """
        def test_x():
            metadata = Metadata(num_decodes=1, num_prefills=0)
            Builder.split(SimpleNamespace(device=1, size=2), metadata)
        """,
        frozenset(),
    ),
    Case(
        "made-self-a-built-argument-s-field-takes-the-branch",
        """
        def test_x():
            metadata = Metadata(num_decodes=1, num_prefills=2)
            Builder.split(SimpleNamespace(device=1, size=2), metadata)
        """,
        frozenset({(SELF, "vllm_config")}),
    ),
    Case(
        "a-namespace-stored-on-self-is-read-there",
        """
        from vllm.mod import Keeper

        def test_x():
            k = object.__new__(Keeper)
            k.keep(SimpleNamespace(other=1))
        """,
        frozenset({(ERROR, "common.num_actual_tokens")}),
    ),
    Case(
        "handed-a-local-bound-by-getattr-reads-the-namespace-the-test-gave",
        """
        from vllm.mod import query_len

        def test_x():
            query_len(SimpleNamespace(spec=SimpleNamespace(tokens=2)))
        """,
        frozenset({(ERROR, "cfg.spec.extra_slots")}),
    ),
    Case(
        "handed-a-link-a-getattr-default-allows-missing-is-not-judged",
        """
        from vllm.mod import query_len

        def test_x():
            query_len(SimpleNamespace(other=1))
        """,
        frozenset({(STALE, "other")}),
    ),
    Case(
        "handed-a-holder-s-namespace-decides-the-none-test",
        """
        from unittest.mock import MagicMock
        from vllm.mod import query_len

        def test_x():
            cfg = MagicMock()
            cfg.spec = SimpleNamespace(tokens=2)
            query_len(cfg)
        """,
        frozenset({(ERROR, "cfg.spec.extra_slots")}),
    ),
    Case(
        "constructed-what-a-base-init-stores-is-known-after-it",
        """
        from vllm.mod import SpecBuilder

        def test_x():
            SpecBuilder(SimpleNamespace(spec=SimpleNamespace(tokens=2)))
        """,
        frozenset({(ERROR, "vllm_config.spec.extra_slots")}),
    ),
    Case(
        "constructed-a-stated-value-a-base-init-stores-takes-the-early-return",
        """
        from vllm.mod import SpecBuilder

        def test_x():
            SpecBuilder(SimpleNamespace(spec=SimpleNamespace(tokens=None)))
        """,
        frozenset(),
    ),
    Case(
        "made-self-a-class-attribute-is-not-on-the-namespace",
        """
        from vllm.mod import Layered

        def test_x():
            Layered.spec(SimpleNamespace(other=1), SimpleNamespace(size=1))
        """,
        frozenset({(SELF, "alignment")}),
    ),
    Case(
        "made-self-a-class-attribute-the-namespace-sets-is-there",
        """
        from vllm.mod import Layered

        def test_x():
            Layered.spec(SimpleNamespace(alignment=2), SimpleNamespace(size=1))
        """,
        frozenset(),
    ),
    Case(
        "a-namespace-on-a-stub-field-is-followed-into-a-function",
        """
        from vllm.mod import Reorders

        def test_x():
            r = object.__new__(Reorders)
            r.vllm_config = SimpleNamespace(spec=SimpleNamespace(tokens=2))
            r.threshold()
        """,
        frozenset({(ERROR, "self.vllm_config.spec.extra_slots")}),
    ),
    Case(
        "a-namespace-on-a-stub-field-that-holds-what-the-function-reads",
        """
        from vllm.mod import Reorders

        def test_x():
            r = object.__new__(Reorders)
            r.vllm_config = SimpleNamespace(spec=SimpleNamespace(tokens=2, extra_slots=0))
            r.threshold()
        """,
        frozenset(),
    ),
    Case(
        "handed-a-class-method-whose-cls-builds-one",
        """
        from vllm.mod import Made

        def test_x():
            Made.make(SimpleNamespace(other=1))
        """,
        frozenset({(ERROR, "cfg.size")}),
    ),
    Case(
        "handed-a-function-whose-class-method-builds-one-with-what-it-reads",
        """
        from vllm.mod import make_made

        def test_x():
            make_made(SimpleNamespace(size=1))
        """,
        frozenset(),
    ),
    Case(
        "handed-a-function-whose-class-method-builds-one",
        """
        from vllm.mod import make_made

        def test_x():
            make_made(SimpleNamespace(other=1))
        """,
        frozenset({(ERROR, "cfg.size"), (STALE, "other")}),
    ),
    Case(
        "handed-a-local-flag-the-test-s-values-set-takes-its-arm",
        """
        from vllm.mod import launch

        def test_x():
            launch(SimpleNamespace(needs_coord=True, model=SimpleNamespace(is_moe=1)), 0)
        """,
        frozenset({(ERROR, "cfg.logging")}),
    ),
    Case(
        "handed-a-local-flag-the-test-s-values-clear-skips-a-prepared-arm",
        """
        from vllm.mod import launch

        def test_x():
            launch(SimpleNamespace(needs_coord=False, model=SimpleNamespace(is_moe=1)), 0)
        """,
        frozenset(),
    ),
    Case(
        "made-self-a-nested-namespace-s-missing-link",
        """
        from vllm.mod import CfgRunner

        def test_x():
            CfgRunner.init(SimpleNamespace(cfg=SimpleNamespace(other=1)))
        """,
        frozenset({(ERROR, "self.cfg.extra")}),
    ),
    Case(
        "made-self-a-nested-namespace-s-missing-link-under-pytest-raises-before-any-raise",
        """
        import pytest
        from vllm.mod import CfgRunner

        def test_x():
            with pytest.raises(ValueError):
                CfgRunner.init(SimpleNamespace(cfg=SimpleNamespace(other=1)))
        """,
        frozenset({(ERROR, "self.cfg.extra")}),
    ),
    Case(
        "field-of-a-stub-set-by-object-setattr",
        """
        def test_x():
            b = object.__new__(Builder)
            object.__setattr__(b, "mla_dims", SimpleNamespace(v_head_dim=1))
            b.dims()
        """,
        frozenset({(ERROR, "self.mla_dims.qk_nope_head_dim")}),
    ),
    Case(
        "field-of-a-stub-set-by-object-setattr-whole",
        """
        def test_x():
            b = object.__new__(Builder)
            dims = SimpleNamespace(v_head_dim=1, qk_nope_head_dim=2)
            object.__setattr__(b, "mla_dims", dims)
            b.dims()
        """,
        frozenset(),
    ),
    Case(
        "handed-to-a-module-loaded-by-name",
        """
        import importlib
        mod = importlib.import_module("vllm.mod")

        def test_x():
            mod.build_common(SimpleNamespace(other=1))
        """,
        frozenset({(ERROR, "common.num_actual_tokens"), (STALE, "other")}),
    ),
    Case(
        "handed-to-a-module-loaded-by-a-computed-name",
        """
        import importlib
        mod = importlib.import_module(NAME)

        def test_x():
            mod.build_common(SimpleNamespace(other=1))
        """,
        frozenset(),
    ),
    Case(
        "a-field-set-through-a-field-s-namespace",
        """
        def test_x():
            b = object.__new__(Builder)
            common = SimpleNamespace(tensor=SimpleNamespace())
            common.tensor.shape = (1,)
            b.deep(common)
        """,
        frozenset(),
    ),
    Case(
        "a-field-s-namespace-lacks-the-link",
        """
        def test_x():
            b = object.__new__(Builder)
            common = SimpleNamespace(tensor=SimpleNamespace())
            common.tensor.size = (1,)
            b.deep(common)
        """,
        frozenset({(ERROR, "common.tensor.shape")}),
    ),
    Case(
        "a-field-set-through-a-field-s-namespace-by-one-caller-only",
        """
        def make():
            return SimpleNamespace(tensor=SimpleNamespace())

        def test_a():
            b = object.__new__(Builder)
            common = make()
            common.tensor.shape = (1,)
            b.deep(common)

        def test_b():
            b = object.__new__(Builder)
            b.deep(make())
        """,
        frozenset({(ERROR, "common.tensor.shape")}),
    ),
    Case(
        "handed-a-local-bound-to-a-stated-condition-decides-the-early-return",
        """
        import vllm.mod as mod
        def test_x():
            mod.gate(SimpleNamespace(slots=2, pooling=False))
        """,
        frozenset({(ERROR, "runner.budget")}),
    ),
    Case(
        "handed-a-local-bound-to-a-stated-condition-takes-the-early-return",
        """
        import vllm.mod as mod
        def test_x():
            mod.gate(SimpleNamespace(slots=1, pooling=False))
        """,
        frozenset(),
    ),
    Case(
        "handed-a-helper-s-namespace-is-the-object-it-states",
        """
        import vllm.mod as mod
        def _runner():
            return SimpleNamespace(slots=2, pooling=False)
        def test_x():
            mod.gate(_runner())
        """,
        frozenset({(ERROR, "runner.budget")}),
    ),
    Case(
        "handed-a-helper-s-namespace-with-a-field-set-again-stays-a-note",
        """
        import vllm.mod as mod
        def _runner(n):
            ns = SimpleNamespace(slots=2, pooling=False)
            ns.slots = n
            return ns
        def test_x():
            mod.gate(_runner(1))
        """,
        frozenset({(NOTE, "runner.budget")}),
    ),
    Case(
        "handed-a-local-the-loop-rebinds-is-unknown-in-the-loop",
        """
        import vllm.mod as mod
        def test_x():
            mod.drain(SimpleNamespace(size=1), [0, 1])
        """,
        frozenset({(NOTE, "runner.spare")}),
    ),
    Case(
        "handed-a-nested-def-s-return-does-not-end-the-call",
        """
        import vllm.mod as mod
        def test_x():
            mod.nested(SimpleNamespace(size=1))
        """,
        frozenset({(ERROR, "runner.fresh")}),
    ),
    Case(
        "handed-a-dict-display-decides-isinstance",
        """
        import vllm.mod as mod
        def test_x():
            mod.by_kind(SimpleNamespace(size=1), {"a": 1})
        """,
        frozenset({(ERROR, "runner.fresh"), (STALE, "size")}),
    ),
    Case(
        "handed-a-list-display-takes-the-isinstance-early-return",
        """
        import vllm.mod as mod
        def test_x():
            mod.by_kind(SimpleNamespace(size=1), [1])
        """,
        frozenset({(STALE, "size")}),
    ),
    Case(
        "handed-an-unstated-argument-leaves-isinstance-undecided",
        """
        import vllm.mod as mod
        def test_x(meta):
            mod.by_kind(SimpleNamespace(size=1), meta)
        """,
        frozenset({(NOTE, "runner.fresh"), (STALE, "size")}),
    ),
    Case(
        "handed-a-local-bound-to-and-holds-the-operand-it-evaluates-to",
        """
        import vllm.mod as mod
        def test_x():
            mod.pick(SimpleNamespace(quant=None))
        """,
        frozenset({(ERROR, "runner.fresh")}),
    ),
    Case(
        "handed-a-local-bound-to-and-takes-the-early-return-it-decides",
        """
        import vllm.mod as mod
        def test_x():
            mod.pick(SimpleNamespace(quant=SimpleNamespace(name="mx")))
        """,
        frozenset(),
    ),
    Case(
        "handed-a-loop-over-a-stated-non-empty-list-runs-its-body",
        """
        import vllm.mod as mod
        def test_x():
            mod.each(SimpleNamespace(other=1), [0, 1])
        """,
        frozenset({(ERROR, "runner.size"), (NOTE, "runner.fresh"), (STALE, "other")}),
    ),
    Case(
        "handed-a-loop-over-a-stated-empty-list-or-unstated-items-stays-a-note",
        """
        import vllm.mod as mod
        def test_x(groups):
            mod.each(SimpleNamespace(other=1), [])
            mod.each(SimpleNamespace(other=2), groups)
        """,
        frozenset({(NOTE, "runner.size"), (NOTE, "runner.fresh"), (STALE, "other")}),
    ),
    Case(
        "handed-a-holder-is-known-by-the-namespaces-set-on-it",
        """
        from unittest.mock import MagicMock
        import vllm.mod as mod
        def test_x():
            runner = MagicMock()
            runner.cfg = SimpleNamespace(size=1)
            mod.held(runner)
        """,
        frozenset({(ERROR, "runner.cfg.fresh")}),
    ),
    Case(
        "handed-a-holder-s-own-fields-stay-unknown",
        """
        from unittest.mock import MagicMock
        import vllm.mod as mod
        def test_x():
            runner = MagicMock()
            runner.cfg = SimpleNamespace(size=1)
            mod.held_other(runner)
        """,
        frozenset({(NOTE, "runner.cfg.fresh")}),
    ),
    Case(
        "handed-an-object-built-with-the-class-isinstance-names-takes-that-arm",
        """
        import vllm.mod as mod
        from vllm.mod import Params
        def test_x():
            mod.validate(SimpleNamespace(size=1), Params())
        """,
        frozenset({(ERROR, "proc.fresh"), (STALE, "size")}),
    ),
    Case(
        "handed-an-object-of-another-class-leaves-isinstance-undecided",
        """
        import vllm.mod as mod
        from vllm.other import Sub
        def test_x():
            mod.validate(SimpleNamespace(size=1), Sub())
        """,
        frozenset({(NOTE, "proc.fresh"), (STALE, "size")}),
    ),
    Case(
        "made-self-lacks-a-method-of-the-class",
        """
        from vllm.mod import Config

        def test_x():
            Config.runner(SimpleNamespace(size=1))
        """,
        frozenset({(SELF, "_features")}),
    ),
    Case(
        "made-self-holds-the-method-the-test-gave-it",
        """
        from vllm.mod import Config

        def test_x():
            ns = SimpleNamespace(size=1)
            ns._features = lambda: 1
            Config.runner(ns)
        """,
        frozenset(),
    ),
    Case(
        "made-self-its-own-method-the-test-wraps-in-a-lambda-still-runs-the-class-s",
        """
        from vllm.mod import Config

        def test_x():
            ns = SimpleNamespace(other=1)
            ns._features = lambda: Config._features(ns)
            Config.runner(ns)
        """,
        frozenset({(SELF, "size")}),
    ),
    Case(
        "made-self-lacks-a-class-default",
        """
        from vllm.mod import Config

        def test_x():
            Config.mode(SimpleNamespace(size=1))
        """,
        frozenset({(SELF, "policy")}),
    ),
    Case(
        "made-self-a-class-default-read-through-getattr-with-a-default",
        """
        from vllm.mod import Config

        def test_x():
            Config.guarded_mode(SimpleNamespace(size=1))
        """,
        frozenset(),
    ),
    Case(
        "made-self-lacks-a-property-of-the-class",
        """
        from vllm.mod import Config

        def test_x():
            Config.uses_v2.fget(SimpleNamespace(size=1))
        """,
        frozenset({(SELF, "runner_kind")}),
    ),
    Case(
        "a-local-bound-to-a-stub-s-namespace-field-reads-it",
        """
        from vllm.mod import Client

        def test_x():
            c = object.__new__(Client)
            c.vllm_config = SimpleNamespace(cache_config=SimpleNamespace(blocks=0))
            c.apply()
        """,
        frozenset({(ERROR, "self.vllm_config.parallel_config")}),
    ),
    Case(
        "a-local-bound-to-a-stub-s-namespace-field-that-holds-the-link",
        """
        from vllm.mod import Client

        def test_x():
            c = object.__new__(Client)
            c.vllm_config = SimpleNamespace(
                cache_config=SimpleNamespace(blocks=0),
                parallel_config=SimpleNamespace(size=1),
            )
            c.apply()
        """,
        frozenset(),
    ),
    Case(
        "typing-cast-hands-back-the-namespace",
        """
        from typing import cast
        from vllm.mod import Config

        def test_x():
            ns = cast(Config, SimpleNamespace(size=1))
            Config.runner(ns)
        """,
        frozenset({(SELF, "_features")}),
    ),
    Case(
        "another-cast-is-other-code",
        """
        from elsewhere import cast
        from vllm.mod import Config

        def test_x():
            ns = cast(Config, SimpleNamespace(size=1))
            Config.runner(ns)
        """,
        frozenset(),
    ),
    Case(
        "a-stub-s-namespace-field-handed-to-a-function",
        """
        from vllm.mod import Registrar

        def test_x():
            r = object.__new__(Registrar)
            r.vllm_config = SimpleNamespace(parallel=1)
            r.register()
        """,
        frozenset({(ERROR, "self.vllm_config.kv_transfer_config")}),
    ),
    Case(
        "a-stub-s-namespace-field-handed-to-a-function-holds-the-link",
        """
        from vllm.mod import Registrar

        def test_x():
            r = object.__new__(Registrar)
            r.vllm_config = SimpleNamespace(kv_transfer_config=None)
            r.register()
        """,
        frozenset(),
    ),
    Case(
        "handed-on-past-a-patch-that-may-raise-the-expected-exception-stays-a-note",
        """
        import pytest
        import vllm.mod as mod
        from vllm.mod import Registrar

        def test_x(monkeypatch):
            monkeypatch.setattr(mod, "build_common", boom)
            r = object.__new__(Registrar)
            r.vllm_config = SimpleNamespace(parallel=1)
            with pytest.raises(RuntimeError):
                r.register_all([1, 2])
        """,
        frozenset({(NOTE, "self.vllm_config.kv_transfer_config")}),
    ),
    Case(
        "made-self-what-a-method-it-lacks-reads-is-a-note",
        """
        from vllm.mod import Config

        def test_x():
            Config.runner(SimpleNamespace(other=1))
        """,
        frozenset({(SELF, "_features"), (NOTE, "size")}),
    ),
    Case(
        "made-self-a-method-it-lacks-is-walked-with-the-call-s-literal-arguments",
        """
        from vllm.mod import Counter

        def test_x():
            Counter.count(SimpleNamespace(other=1))
        """,
        frozenset({(SELF, "_count_of")}),
    ),
    Case(
        "a-conditional-s-namespace-a-parametrize-case-selects-is-the-field",
        """
        import pytest
        from vllm.mod import spec_width

        @pytest.mark.parametrize("method", [None, "eagle"])
        def test_x(method):
            config = SimpleNamespace(
                speculative_config=None if method is None else SimpleNamespace(other=1)
            )
            spec_width(config)
        """,
        frozenset({(ERROR, "config.speculative_config.width"), (STALE, "other")}),
    ),
    Case(
        "a-conditional-s-namespace-no-case-selects-is-not-the-field",
        """
        import pytest
        from vllm.mod import spec_width

        @pytest.mark.parametrize("method", [None])
        def test_x(method):
            spec_width(
                SimpleNamespace(
                    speculative_config=None if method is None else SimpleNamespace(other=1)
                )
            )
        """,
        frozenset(),
    ),
    Case(
        "a-conditional-s-namespace-undecided-is-a-possible-field",
        """
        from vllm.mod import spec_width

        def test_x(method):
            spec_width(
                SimpleNamespace(
                    speculative_config=None if method is None else SimpleNamespace(other=1)
                )
            )
        """,
        frozenset({(NOTE, "config.speculative_config.width")}),
    ),
    Case(
        "a-conditional-s-namespace-a-helper-s-caller-selects-is-the-field",
        """
        import pytest
        from vllm.mod import spec_width

        def _make(method=None):
            return SimpleNamespace(
                speculative_config=None if method is None else SimpleNamespace(other=1)
            )

        @pytest.mark.parametrize("method", [None, "eagle"])
        def test_x(method):
            spec_width(_make(method))
        """,
        frozenset({(ERROR, "config.speculative_config.width"), (STALE, "other")}),
    ),
    Case(
        "a-conditional-s-call-taking-a-namespace-is-not-the-namespace",
        """
        import pytest
        from vllm.mod import spec_width

        @pytest.mark.parametrize("method", [None, "eagle"])
        def test_x(method):
            config = SimpleNamespace(
                speculative_config=None if method is None else make(cfg=SimpleNamespace())
            )
            spec_width(config)
        """,
        frozenset(),
    ),
    Case(
        "a-class-a-helper-s-caller-hands-in-is-the-constructor-met",
        """
        from vllm.mod import Widths

        def _build(builder_cls):
            config = SimpleNamespace(speculative_config=SimpleNamespace(other=1))
            return builder_cls(config)

        def test_x():
            _build(Widths)
        """,
        frozenset({(ERROR, "config.speculative_config.width"), (STALE, "other")}),
    ),
    Case(
        "a-class-a-helper-s-caller-does-not-name-is-not-met",
        """
        from vllm.mod import Widths

        def _build(builder_cls):
            config = SimpleNamespace(speculative_config=SimpleNamespace(other=1))
            return builder_cls(config)

        def test_x(cls):
            _build(cls)
        """,
        frozenset(),
    ),
    Case(
        "a-field-saved-and-restored-by-a-callee-is-the-namespace-s-again",
        """
        from vllm.mod import warm_restored

        def test_x():
            warm_restored(SimpleNamespace(manager=SimpleNamespace(other=1)))
        """,
        frozenset({(ERROR, "runner.manager.budget")}),
    ),
    Case(
        "a-field-saved-after-a-write-and-stored-back-stays-the-walk-s",
        """
        from vllm.mod import warm_replaced

        def test_x():
            warm_replaced(SimpleNamespace(manager=SimpleNamespace(other=1)))
        """,
        frozenset(),
    ),
    Case(
        "a-test-subclass-runs-its-base-s-constructor-with-its-own-methods",
        """
        from vllm.mod import Drafter

        class _Test(Drafter):
            model: object

            def load(self, cfg):
                return None

        def test_x():
            _Test(SimpleNamespace(spec=SimpleNamespace(other=1)))
        """,
        frozenset({(ERROR, "cfg.spec.dcp_size")}),
    ),
    Case(
        "a-test-subclass-with-a-class-attribute-is-not-judged",
        """
        from vllm.mod import Drafter

        class _Test(Drafter):
            size = 1

        def test_x():
            _Test(SimpleNamespace(spec=SimpleNamespace(other=1)))
        """,
        frozenset(),
    ),
    Case(
        "stale-a-field-no-code-it-meets-reads",
        """
        from vllm.mod import stale_reads

        def test_x():
            stale_reads(SimpleNamespace(used=1, unused=2))
        """,
        frozenset({(STALE, "unused")}),
    ),
    Case(
        "stale-a-field-the-test-itself-reads-is-not",
        """
        from vllm.mod import stale_reads

        def test_x():
            ns = SimpleNamespace(used=1, unused=2)
            stale_reads(ns)
            assert ns.unused == 2
        """,
        frozenset(),
    ),
    Case(
        "stale-a-read-on-a-branch-the-test-does-not-take-still-reads-it",
        """
        from vllm.mod import stale_branch

        def test_x():
            stale_branch(SimpleNamespace(used=1, rare=2))
        """,
        frozenset(),
    ),
    Case(
        "stale-read-through-a-function-it-is-passed-on-to",
        """
        from vllm.mod import stale_passes

        def test_x():
            stale_passes(SimpleNamespace(used=1, unused=2))
        """,
        frozenset({(STALE, "unused")}),
    ),
    Case(
        "stale-kept-in-a-global-is-not-judged",
        """
        from vllm.mod import stale_keeps

        def test_x():
            stale_keeps(SimpleNamespace(used=1, unused=2))
        """,
        frozenset(),
    ),
    Case(
        "stale-seen-whole-by-vars-is-not-judged",
        """
        from vllm.mod import stale_vars

        def test_x():
            stale_vars(SimpleNamespace(unused=2))
        """,
        frozenset(),
    ),
    Case(
        "stale-returned-to-the-test-is-not-judged",
        """
        from vllm.mod import stale_returns

        def test_x():
            stale_returns(SimpleNamespace(unused=2))
        """,
        frozenset(),
    ),
    Case(
        "stale-stored-by-a-constructor-is-not-judged",
        """
        from vllm.mod import StaleKeeper

        def test_x():
            StaleKeeper(SimpleNamespace(unused=2))
        """,
        frozenset(),
    ),
    Case(
        "stale-read-by-a-computed-getattr-is-not-judged",
        """
        from vllm.mod import stale_named

        def test_x():
            stale_named(SimpleNamespace(a=1), "a")
        """,
        frozenset(),
    ),
    Case(
        "stale-a-decorated-callee-is-not-judged",
        """
        from vllm.mod import stale_decorated

        def test_x():
            stale_decorated(SimpleNamespace(used=1, unused=2))
        """,
        frozenset(),
    ),
    Case(
        "stale-nested-fields-are-judged-where-their-owner-is",
        """
        from vllm.mod import stale_nested

        def test_x():
            stale_nested(SimpleNamespace(model=SimpleNamespace(dtype=1, extra=2), top=3))
        """,
        frozenset({(STALE, "extra"), (STALE, "top")}),
    ),
    Case(
        "stale-a-nested-namespace-read-through-a-local-alias",
        """
        from vllm.mod import stale_local

        def test_x():
            stale_local(SimpleNamespace(model=SimpleNamespace(dtype=1, extra=2)))
        """,
        frozenset({(STALE, "extra")}),
    ),
    Case(
        "stale-a-nested-namespace-the-test-hands-on-is-not-judged",
        """
        from vllm.mod import stale_nested

        def test_x():
            ns = SimpleNamespace(model=SimpleNamespace(dtype=1, extra=2))
            stale_nested(ns)
            print(ns.model)
        """,
        frozenset(),
    ),
    Case(
        "stale-a-meeting-no-walk-follows-is-not-judged",
        """
        import json
        from vllm.mod import stale_reads

        def test_x():
            ns = SimpleNamespace(used=1, unused=2)
            stale_reads(ns)
            json.dumps(ns)
        """,
        frozenset(),
    ),
    Case(
        "stale-judged-over-every-meeting",
        """
        from vllm.mod import stale_branch, stale_reads

        def test_x():
            ns = SimpleNamespace(used=1, rare=2, unused=3)
            stale_reads(ns)
            stale_branch(ns, flag=True)
        """,
        frozenset({(STALE, "unused")}),
    ),
    Case(
        "stale-built-by-a-private-helper-of-the-test-module",
        """
        from vllm.mod import stale_reads

        def _make():
            return SimpleNamespace(used=1, unused=2)

        def test_x():
            stale_reads(_make())
        """,
        frozenset({(STALE, "unused")}),
    ),
    Case(
        "stale-built-by-a-helper-other-modules-may-import-is-not-judged",
        """
        from vllm.mod import stale_reads

        def make():
            return SimpleNamespace(used=1, unused=2)

        def test_x():
            stale_reads(make())
        """,
        frozenset(),
    ),
    Case(
        "stale-put-in-a-list-by-the-test-is-not-judged",
        """
        from vllm.mod import stale_reads

        def test_x():
            ns = SimpleNamespace(used=1, unused=2)
            stale_reads(ns)
            kept = [ns]
        """,
        frozenset(),
    ),
    Case(
        "stale-an-indirect-parametrize-value-is-not-judged",
        """
        import pytest
        from vllm.mod import stale_reads

        @pytest.mark.parametrize("cfg", [SimpleNamespace(used=1, unused=2)], indirect=True)
        def test_x(cfg):
            stale_reads(cfg)
        """,
        frozenset(),
    ),
    Case(
        "stale-silenced-on-the-line-that-builds-it",
        """
        from vllm.mod import stale_reads

        def test_x():
            stale_reads(SimpleNamespace(used=1, unused=2))  # audit-stubs: ignore[stale-field]
        """,
        frozenset(),
    ),
    Case(
        "stale-a-namespace-a-field-s-value-hands-to-a-call-is-not-judged",
        """
        import copy
        from vllm.mod import stale_nested

        def test_x():
            stale_nested(SimpleNamespace(model=copy.copy(SimpleNamespace(dtype=1, extra=2))))
        """,
        frozenset(),
    ),
    Case(
        "stale-a-made-self-namespace-is-not-judged",
        """
        def test_x():
            ns = SimpleNamespace(_decode_causal=True, _new_field=1, unused=2)
            Builder.decode(ns, 1)
        """,
        frozenset(),
    ),
    Case(
        "spec-mock-read-of-an-attribute-init-sets-raises",
        """
        from unittest.mock import Mock
        from vllm.mod import Engine, engine_count

        def test_x():
            engine_count(Mock(spec=Engine))
        """,
        frozenset({(ERROR, "engine.count")}),
    ),
    Case(
        "spec-mock-spec-set-and-magicmock-raise-alike",
        """
        from unittest.mock import MagicMock, NonCallableMagicMock
        from vllm.mod import Engine, engine_count

        def test_x():
            engine_count(MagicMock(spec_set=Engine))

        def test_y():
            engine_count(NonCallableMagicMock(Engine))
        """,
        frozenset({(ERROR, "engine.count")}),
    ),
    Case(
        "spec-mock-a-name-only-annotated-raises",
        """
        from unittest.mock import Mock
        from vllm.mod import Engine, engine_size

        def test_x():
            engine_size(Mock(spec=Engine))
        """,
        frozenset({(ERROR, "engine.size")}),
    ),
    Case(
        "spec-mock-methods-properties-class-attributes-are-answered",
        """
        from unittest.mock import MagicMock
        from vllm.mod import Engine, engine_class_level

        def test_x():
            engine_class_level(MagicMock(spec=Engine))
        """,
        frozenset(),
    ),
    Case(
        "spec-mock-only-the-first-link-is-judged",
        """
        from unittest.mock import Mock
        from vllm.mod import Engine, engine_deep

        def test_x():
            engine_deep(Mock(spec=Engine))
        """,
        frozenset(),
    ),
    Case(
        "spec-mock-an-attribute-the-test-sets",
        """
        from unittest.mock import Mock, PropertyMock
        from vllm.mod import Engine, engine_count

        def test_x():
            engine = Mock(spec=Engine)
            engine.count = 1
            engine_count(engine)

        def test_y():
            engine = Mock(spec=Engine, count=1)
            engine_count(engine)

        def test_z():
            engine = Mock(spec=Engine)
            engine.configure_mock(**{"count": 1})
            engine_count(engine)

        def test_w():
            engine = Mock(spec=Engine)
            type(engine).count = PropertyMock(return_value=1)
            engine_count(engine)
        """,
        frozenset(),
    ),
    Case(
        "spec-mock-a-name-the-test-itself-reads",
        """
        from unittest.mock import Mock
        from vllm.mod import Engine, engine_count

        def test_x(monkeypatch):
            monkeypatch.setattr(Engine, "count", 0, raising=False)
            engine = Mock(spec=Engine)
            engine_count(engine)
            engine.count.assert_not_called()
        """,
        frozenset(),
    ),
    Case(
        "plain-magicmock-never-raises",
        """
        from unittest.mock import MagicMock
        from vllm.mod import engine_count

        def test_x():
            engine_count(MagicMock())
        """,
        frozenset(),
    ),
    Case(
        "spec-mock-getattr-with-a-default",
        """
        from unittest.mock import Mock
        from vllm.mod import Engine, engine_guarded

        def test_x():
            engine_guarded(Mock(spec=Engine))
        """,
        frozenset(),
    ),
    Case(
        "spec-mock-made-self-its-methods-are-the-mock-s",
        """
        from unittest.mock import Mock
        from vllm.mod import Engine

        def test_x():
            Engine.total(Mock(spec=Engine))
        """,
        frozenset({(ERROR, "self.count")}),
    ),
    Case(
        "spec-mock-made-self-the-test-sets-the-attribute",
        """
        from unittest.mock import Mock
        from vllm.mod import Engine

        def test_x():
            engine = Mock(spec=Engine)
            engine.count = 2
            Engine.total(engine)
        """,
        frozenset(),
    ),
    Case(
        "spec-mock-a-spec-with-a-base-outside-the-tree-is-not-judged",
        """
        from unittest.mock import Mock
        from vllm.mod import Outside, engine_count

        def test_x():
            engine_count(Mock(spec=Outside))
        """,
        frozenset(),
    ),
    Case(
        "spec-mock-a-spec-given-as-an-instance-is-not-judged",
        """
        from unittest.mock import Mock
        from vllm.mod import Engine, engine_count

        def test_x():
            engine_count(Mock(spec=Engine(None)))
        """,
        frozenset(),
    ),
    Case(
        "spec-mock-a-list-spec-answers-its-names-alone",
        """
        from unittest.mock import Mock
        from vllm.mod import engine_count, engine_class_level

        def test_x():
            engine_count(Mock(spec=["count"]))
            engine_class_level(Mock(spec=["count"]))
        """,
        frozenset(
            {
                (ERROR, "engine.kind"),
                (ERROR, "engine.run"),
                (ERROR, "engine.busy"),
                (ERROR, "engine.total"),
            }
        ),
    ),
    Case(
        "spec-mock-a-dataclass-field-without-a-class-level-default-raises",
        """
        from unittest.mock import Mock
        from vllm.mod import Conf, conf_needed, conf_built, conf_defaults

        def test_x():
            conf_needed(Mock(spec=Conf))
            conf_built(Mock(spec=Conf))
            conf_defaults(Mock(spec=Conf))
        """,
        frozenset({(ERROR, "conf.needed"), (ERROR, "conf.built")}),
    ),
    Case(
        "spec-mock-autospec-of-a-dataclass-lacks-a-field-before-python-3-14",
        """
        from unittest.mock import create_autospec
        from vllm.mod import Conf, Engine, conf_needed, engine_count

        def test_x():
            conf_needed(create_autospec(Conf, instance=True))
            engine_count(create_autospec(Engine, instance=True))
        """,
        frozenset({(NOTE, "conf.needed"), (ERROR, "engine.count")}),
    ),
    Case(
        "spec-mock-held-by-a-namespace",
        """
        from unittest.mock import Mock
        from vllm.mod import Engine, held_count

        def test_x():
            held_count(SimpleNamespace(engine=Mock(spec=Engine)))

        def test_y():
            engine = Mock(spec=Engine)
            engine.count = 1
            held_count(SimpleNamespace(engine=engine))
        """,
        frozenset({(ERROR, "holder.engine.count")}),
    ),
    Case(
        "made-self-an-early-return-a-local-bound-to-the-result-rules-out-is-not-its-path",
        """
        from vllm.mod import Gate
        def test_x(s):
            n = Gate.clip(SimpleNamespace(block_size=16), s, 8)
            assert n == 24
        """,
        frozenset({(SELF, "new_flag")}),
    ),
    Case(
        "made-self-an-assertion-on-a-local-rebound-after-the-call-says-nothing-of-it",
        """
        from vllm.mod import Gate
        def test_x(s):
            n = Gate.clip(SimpleNamespace(block_size=16), s, 8)
            n = n * 3
            assert n == 24
        """,
        frozenset({(NOTE, "new_flag")}),
    ),
    Case(
        "made-self-arithmetic-over-names-bound-once-states-the-argument-and-the-result",
        """
        from vllm.mod import Gate
        SIZE = 4
        def test_x(s):
            blocks = 2
            assert Gate.clip(SimpleNamespace(block_size=16), s, blocks * SIZE) == 3 * SIZE
        """,
        frozenset({(SELF, "new_flag")}),
    ),
    Case(
        "made-self-arithmetic-equal-to-the-early-return-may-be-its-path",
        """
        from vllm.mod import Gate
        SIZE = 4
        def test_x(s):
            blocks = 2
            assert Gate.clip(SimpleNamespace(block_size=16), s, blocks * SIZE) == 2 * SIZE
        """,
        frozenset({(NOTE, "new_flag")}),
    ),
    Case(
        "made-self-a-name-bound-twice-states-no-asserted-value",
        """
        from vllm.mod import Gate
        def test_x(s, flag):
            size = 4
            if flag:
                size = 2
            assert Gate.clip(SimpleNamespace(block_size=16), s, 8) == 3 * size
        """,
        frozenset({(NOTE, "new_flag")}),
    ),
    Case(
        "made-self-isinstance-of-an-array-the-test-builds-is-decided",
        """
        import torch
        from vllm.mod import Heads
        def test_x():
            Heads.pad(SimpleNamespace(other=1), torch.zeros(2, 3))
        """,
        frozenset({(SELF, "head_size")}),
    ),
    Case(
        "made-self-isinstance-of-a-helper-s-result-stays-undecided",
        """
        from vllm.mod import Heads
        def test_x(zeros):
            Heads.pad(SimpleNamespace(other=1), zeros(2, 3))
        """,
        frozenset({(NOTE, "head_size"), (NOTE, "specs")}),
    ),
    Case(
        "made-self-none-is-no-instance-of-a-class-of-the-tree",
        """
        from vllm.mod import Heads
        def test_x():
            Heads.route(SimpleNamespace(group=None))
        """,
        frozenset({(SELF, "fresh")}),
    ),
    Case(
        "made-self-none-may-satisfy-a-protocol",
        """
        from vllm.mod import Heads
        def test_x():
            Heads.route_proto(SimpleNamespace(group=None))
        """,
        frozenset({(NOTE, "fresh")}),
    ),
    Case(
        "made-self-a-local-bound-to-a-literal-decides-a-later-branch",
        """
        from vllm.mod import Heads
        def test_x():
            Heads.cached(SimpleNamespace(other=1), 0)
        """,
        frozenset({(SELF, "fresh")}),
    ),
    Case(
        "made-self-a-literal-local-an-undecided-arm-rebinds-is-unknown",
        """
        from vllm.mod import Heads
        def test_x(n):
            Heads.cached(SimpleNamespace(other=1), n)
        """,
        frozenset({(NOTE, "fresh")}),
    ),
    Case(
        "made-self-a-field-set-to-what-a-predicate-returns-decides-an-or",
        """
        from vllm.mod import Handle
        def test_x():
            meta = SimpleNamespace(num_decode=1, num_actual=2)
            Handle.prepare(SimpleNamespace(runtime=SimpleNamespace(other=1)), meta)
        """,
        frozenset({(ERROR, "self.runtime.width")}),
    ),
    Case(
        "made-self-a-predicate-true-for-the-test-s-values-skips-the-or-s-operand",
        """
        from vllm.mod import Handle
        def test_x():
            meta = SimpleNamespace(num_decode=2, num_actual=2)
            Handle.prepare(SimpleNamespace(runtime=SimpleNamespace(other=1)), meta)
        """,
        frozenset(),
    ),
    Case(
        "made-self-a-predicate-of-values-the-test-does-not-state-stays-undecided",
        """
        from vllm.mod import Handle
        def test_x(meta):
            Handle.prepare(SimpleNamespace(runtime=SimpleNamespace(other=1)), meta)
        """,
        frozenset({(NOTE, "self.runtime.width")}),
    ),
    Case(
        "made-self-in-a-helper-the-assertion-on-the-helper-s-result-rules-out-an-early-return",
        """
        from vllm.mod import Gate
        def _clip(s, n):
            ns = SimpleNamespace(block_size=16)
            return Gate.clip(ns, s, n)

        def test_x(s):
            assert _clip(s, 8) == 24
        """,
        frozenset({(SELF, "new_flag")}),
    ),
    Case(
        "made-self-in-a-helper-an-asserted-result-equal-to-the-early-return-may-be-its-path",
        """
        from vllm.mod import Gate
        def _clip(s, n):
            ns = SimpleNamespace(block_size=16)
            return Gate.clip(ns, s, n)

        def test_x(s):
            assert _clip(s, 8) == 8
        """,
        frozenset({(NOTE, "new_flag")}),
    ),
    Case(
        "made-self-in-a-helper-that-changes-the-argument-states-nothing-of-it",
        """
        from vllm.mod import Gate
        def _clip(s, n):
            ns = SimpleNamespace(block_size=16)
            n = n * 3
            return Gate.clip(ns, s, n)

        def test_x(s):
            assert _clip(s, 8) == 24
        """,
        frozenset({(NOTE, "new_flag")}),
    ),
    Case(
        "handed-an-assertion-inside-pytest-raises-rules-out-nothing",
        """
        import pytest
        import vllm.mod as mod
        def test_x(s):
            with pytest.raises(ValueError):
                assert mod.clip_fn(SimpleNamespace(size=1), s, 8) == 9
        """,
        frozenset({(NOTE, "runner.fresh")}),
    ),
    Case(
        "a-call-in-the-other-arm-of-the-test-s-if-does-not-run-before",
        """
        import pytest
        import vllm.mod as mod

        @pytest.mark.parametrize("fail", [False, True])
        def test_x(monkeypatch, fail):
            runner = SimpleNamespace(other=1)

            def steps(r):
                if fail:
                    raise RuntimeError("stop")

            monkeypatch.setattr(mod, "_steps", steps)
            if fail:
                with pytest.raises(RuntimeError):
                    mod.stepped_budget(runner)
            else:
                mod.stepped_budget(runner)
        """,
        frozenset({(ERROR, "runner.budget")}),
    ),
    Case(
        "a-call-in-a-loop-may-follow-the-other-arm-s",
        """
        import pytest
        import vllm.mod as mod

        def test_x(monkeypatch):
            runner = SimpleNamespace(other=1)
            for fail in (True, False):
                def steps(r):
                    if fail:
                        raise RuntimeError("stop")

                monkeypatch.setattr(mod, "_steps", steps)
                if fail:
                    with pytest.raises(RuntimeError):
                        mod.stepped_budget(runner)
                else:
                    mod.stepped_budget(runner)
        """,
        frozenset({(NOTE, "runner.budget")}),
    ),
    Case(
        "a-call-after-an-if-whose-arm-returns-follows-the-other-arm",
        """
        import pytest
        import vllm.mod as mod

        @pytest.mark.parametrize("fail", [False, True])
        def test_x(monkeypatch, fail):
            runner = SimpleNamespace(other=1)

            def steps(r):
                if fail:
                    raise RuntimeError("stop")

            monkeypatch.setattr(mod, "_steps", steps)
            if fail:
                with pytest.raises(RuntimeError):
                    mod.stepped_budget(runner)
                return
            mod.stepped_budget(runner)
        """,
        frozenset({(ERROR, "runner.budget")}),
    ),
    Case(
        "a-call-after-an-if-whose-arm-goes-on-may-follow-it",
        """
        import pytest
        import vllm.mod as mod

        @pytest.mark.parametrize("fail", [False, True])
        def test_x(monkeypatch, fail):
            runner = SimpleNamespace(other=1)

            def steps(r):
                if fail:
                    raise RuntimeError("stop")

            monkeypatch.setattr(mod, "_steps", steps)
            if fail:
                with pytest.raises(RuntimeError):
                    mod.stepped_budget(runner)
            mod.stepped_budget(runner)
        """,
        frozenset({(NOTE, "runner.budget")}),
    ),
    Case(
        "a-caller-s-own-set-on-a-helper-s-namespace-wins-over-the-helper-s",
        """
        from vllm.mod import spec_reason

        def _make():
            return SimpleNamespace(spec=None)

        def test_x():
            config = _make()
            config.spec = SimpleNamespace(other=1)
            spec_reason(config)
        """,
        frozenset({(ERROR, "config.spec.reason"), (STALE, "other")}),
    ),
    Case(
        "a-caller-s-set-in-a-branch-leaves-the-field-unsettled",
        """
        from vllm.mod import spec_reason

        def _make():
            return SimpleNamespace(spec=None)

        def test_x(flag):
            config = _make()
            if flag:
                config.spec = SimpleNamespace(other=1)
            spec_reason(config)
        """,
        frozenset({(STALE, "other")}),
    ),
    Case(
        "a-caller-s-deep-set-on-a-helper-s-namespace-decides-its-call",
        """
        from vllm.mod import spec_reason

        def _make():
            return SimpleNamespace(spec=SimpleNamespace(other=1))

        def test_x():
            config = _make()
            config.spec.reason = 1
            spec_reason(config)
        """,
        frozenset({(STALE, "other")}),
    ),
    Case(
        "another-test-s-set-and-call-do-not-reach-a-helper-s-new-namespace",
        """
        from vllm.mod import extra_of

        def _make():
            return SimpleNamespace(other=1)

        def test_a():
            config = _make()
            config.extra = 1
            extra_of(config)

        def test_b():
            config = _make()
            extra_of(config)
        """,
        frozenset({(ERROR, "config.extra"), (STALE, "other")}),
    ),
    Case(
        "a-module-scoped-fixture-s-namespace-is-every-test-s",
        """
        import pytest
        from vllm.mod import extra_of

        from vllm.mod import fill_extra

        @pytest.fixture(scope="module")
        def config():
            return SimpleNamespace(other=1)

        def test_a(config):
            fill_extra(config)

        def test_b(config):
            extra_of(config)
        """,
        frozenset({(STALE, "other")}),
    ),
    Case(
        "a-function-scoped-fixture-s-namespace-is-each-test-s-own",
        """
        import pytest
        from vllm.mod import extra_of

        from vllm.mod import fill_extra

        @pytest.fixture
        def config():
            return SimpleNamespace(other=1)

        def test_a(config):
            fill_extra(config)

        def test_b(config):
            extra_of(config)
        """,
        frozenset({(ERROR, "config.extra"), (STALE, "other")}),
    ),
    Case(
        "a-constructor-the-callee-runs-is-walked",
        """
        import vllm.mod as mod

        def test_x():
            mod.make_engine(SimpleNamespace(other=1))
        """,
        frozenset({(ERROR, "config.width"), (STALE, "other")}),
    ),
    Case(
        # Its parametrize cases name the class the callee builds: that is replaced.
        "a-patch-of-a-name-the-parametrize-cases-give-replaces-what-the-callee-runs",
        """
        import pytest
        from unittest.mock import patch
        import vllm.mod as mod

        @pytest.mark.parametrize("name", ["WidthEngine"])
        def test_x(name):
            with patch.object(mod, name):
                mod.make_engine(SimpleNamespace(other=1))
        """,
        frozenset(),
    ),
    Case(
        "a-patch-of-a-name-the-test-computes-may-replace-what-the-callee-runs",
        """
        import pytest
        from unittest.mock import patch
        import vllm.mod as mod

        @pytest.mark.parametrize("name", ["width_engine"])
        def test_x(name):
            with patch.object(mod, name.title().replace("_", "")):
                mod.make_engine(SimpleNamespace(other=1))
        """,
        frozenset({(NOTE, "config.width")}),
    ),
    Case(
        "another-test-s-fields-prepare-no-block-of-this-test-s-call",
        """
        from vllm.mod import drafts

        def _make(spec):
            return SimpleNamespace(spec=spec)

        def test_a():
            runner = _make(None)
            runner.spec = SimpleNamespace(n=1)
            runner.max_reqs = 1
            drafts(runner)

        def test_b(spec):
            drafts(_make(spec))
        """,
        frozenset({(NOTE, "runner.max_reqs"), (STALE, "n")}),
    ),
    Case(
        "a-parametrize-value-in-a-field-decides-each-case-s-path",
        """
        import pytest
        from vllm.mod import cache_row

        @pytest.mark.parametrize("dtype", ["auto", "packed"])
        def test_x(dtype):
            cache_row(SimpleNamespace(dtype=dtype))
        """,
        frozenset({(ERROR, "layer.impl")}),
    ),
    Case(
        "no-parametrize-value-in-a-field-takes-the-read-s-path",
        """
        import pytest
        from vllm.mod import cache_row

        @pytest.mark.parametrize("dtype", ["auto", "fp8"])
        def test_x(dtype):
            cache_row(SimpleNamespace(dtype=dtype))
        """,
        frozenset(),
    ),
    Case(
        "a-helper-s-kwargs-merged-into-its-defaults-are-each-caller-s-fields",
        """
        from vllm.mod import auto_of

        def _make(**kwargs):
            defaults = dict(numa=False)
            defaults.update(kwargs)
            return SimpleNamespace(**defaults)

        def test_off():
            auto_of(_make())

        def test_on():
            auto_of(_make(numa=True))
        """,
        frozenset({(ERROR, "cfg.auto")}),
    ),
    Case(
        "a-helper-s-kwargs-that-give-the-field-leave-nothing-missing",
        """
        from vllm.mod import auto_of

        def _make(**kwargs):
            defaults = dict(numa=False)
            defaults.update(kwargs)
            return SimpleNamespace(**defaults)

        def test_on():
            auto_of(_make(numa=True, auto=1))
        """,
        frozenset(),
    ),
    Case(
        "a-namespace-handed-on-as-another-s-field-is-met-there",
        """
        from vllm.mod import extra_of

        def test_x():
            cfg = SimpleNamespace(inner=SimpleNamespace(other=1))
            extra_of(cfg.inner)
        """,
        frozenset({(ERROR, "config.extra")}),
    ),
    Case(
        "a-field-handed-on-that-holds-a-real-object-is-not-judged",
        """
        from vllm.mod import extra_of

        def test_x(obj):
            cfg = SimpleNamespace(inner=obj)
            extra_of(cfg.inner)
        """,
        frozenset(),
    ),
    Case(
        "a-partial-binding-a-namespace-runs-nothing-before-the-call",
        """
        import functools
        from vllm.mod import extra_of, fill_extra

        def test_x():
            cfg = SimpleNamespace(other=1)
            cfg.fill = functools.partial(fill_extra, cfg)
            extra_of(cfg)
        """,
        frozenset({(ERROR, "config.extra")}),
    ),
    Case(
        "a-call-handed-the-namespace-before-may-fill-it",
        """
        from vllm.mod import extra_of, fill_extra

        def test_x():
            cfg = SimpleNamespace(other=1)
            fill_extra(cfg)
            extra_of(cfg)
        """,
        frozenset({(STALE, "other")}),
    ),
    Case(
        "a-lambda-s-stated-value-decides-the-path-of-the-object-holding-it",
        """
        from vllm.mod import Capturer

        def _make(needed):
            c = Capturer.__new__(Capturer)
            c.manager = SimpleNamespace(needs=lambda: needed)
            return c

        def test_on():
            c = _make(True)
            c.capture()
        """,
        frozenset({(ERROR, "self.manager.stream")}),
    ),
    Case(
        "namespaces-a-replaced-function-returns-in-a-dict-meet-the-loop-over-its-items",
        """
        import vllm.mod as mod

        def test_x(monkeypatch):
            layers = {name: SimpleNamespace(spec=1) for name in ("a", "b")}
            monkeypatch.setattr(mod, "get_layers", lambda *_: layers)
            mod.layer_specs(SimpleNamespace())
        """,
        frozenset({(ERROR, "get_layers().shared_with")}),
    ),
    Case(
        "namespaces-put-in-a-dict-in-a-loop-over-stated-items-are-returned-too",
        """
        import vllm.mod as mod

        def test_x(monkeypatch):
            layers = {}
            for name in ("a", "b"):
                layers[name] = SimpleNamespace(spec=1)
            monkeypatch.setattr(mod, "get_layers", lambda *_: layers)
            mod.layer_specs(SimpleNamespace())
        """,
        frozenset({(ERROR, "get_layers().shared_with")}),
    ),
    Case(
        "a-returned-dict-the-test-may-leave-empty-makes-the-loop-s-reads-notes",
        """
        import vllm.mod as mod

        def test_x(monkeypatch, names):
            layers = {name: SimpleNamespace() for name in names}
            monkeypatch.setattr(mod, "get_layers", lambda *_: layers)
            mod.layer_specs(SimpleNamespace())
        """,
        frozenset({(NOTE, "get_layers().shared_with"), (NOTE, "get_layers().spec")}),
    ),
    Case(
        "a-returned-dict-whose-items-only-the-loop-reads-is-one-the-loop-runs-on",
        """
        import vllm.mod as mod

        def test_x(monkeypatch, names):
            layers = {name: SimpleNamespace(spec=1) for name in names}
            monkeypatch.setattr(mod, "get_layers", lambda *_: layers)
            mod.layer_specs(SimpleNamespace())
        """,
        frozenset({(ERROR, "get_layers().shared_with")}),
    ),
    Case(
        "returned-namespaces-holding-the-fields-read-leave-nothing-missing",
        """
        import vllm.mod as mod

        def test_x(monkeypatch):
            layers = {n: SimpleNamespace(spec=1, shared_with=None) for n in ("a", "b")}
            monkeypatch.setattr(mod, "get_layers", lambda *_: layers)
            mod.layer_specs(SimpleNamespace())
        """,
        frozenset(),
    ),
    Case(
        "a-lambda-stating-false-keeps-the-read-off-the-path",
        """
        from vllm.mod import Capturer

        def _make(needed):
            c = Capturer.__new__(Capturer)
            c.manager = SimpleNamespace(needs=lambda: needed)
            return c

        def test_off():
            c = _make(False)
            c.capture()
        """,
        frozenset(),
    ),
    Case(
        "a-helper-s-namespace-met-by-code-in-another-test-is-judged",
        """
        from vllm.mod import fill_b, read_b

        def _make():
            return SimpleNamespace(a=1)

        def test_one():
            fill_b(_make())

        def test_two():
            read_b(_make())
        """,
        frozenset({(ERROR, "runner.b"), (STALE, "a")}),
    ),
    Case(
        "a-namespace-met-by-code-earlier-in-the-same-test-is-not-judged",
        """
        from vllm.mod import fill_b, read_b

        def _make():
            return SimpleNamespace(a=1)

        def test_one():
            r = _make()
            fill_b(r)
            read_b(r)
        """,
        frozenset({(STALE, "a")}),
    ),
    Case(
        "a-field-another-test-sets-on-its-copy-is-not-on-this-one",
        """
        from vllm.mod import read_b

        def _make():
            return SimpleNamespace(a=1)

        def test_one():
            r = _make()
            r.b = 2
            read_b(r)

        def test_two():
            read_b(_make())
        """,
        frozenset({(ERROR, "runner.b"), (STALE, "a")}),
    ),
    Case(
        "a-field-set-on-a-namespace-all-tests-share-is-on-it",
        """
        from vllm.mod import read_b

        SHARED = SimpleNamespace(a=1)

        def test_one():
            SHARED.b = 2

        def test_two():
            read_b(SHARED)
        """,
        frozenset(),
    ),
    Case(
        "a-field-the-test-sets-again-is-the-one-the-call-meets",
        """
        from vllm.mod import gated_read

        def _make():
            return SimpleNamespace(cfg=SimpleNamespace(on=False))

        def test_one():
            r = _make()
            r.cfg = SimpleNamespace(on=True)
            gated_read(r)
        """,
        frozenset({(ERROR, "runner.extra")}),
    ),
    Case(
        "a-field-the-test-sets-again-decides-the-branch-it-guards",
        """
        from vllm.mod import gated_read

        def _make():
            return SimpleNamespace(cfg=SimpleNamespace(on=True))

        def test_one():
            r = _make()
            r.cfg = SimpleNamespace(on=False)
            gated_read(r)
        """,
        frozenset(),
    ),
    Case(
        "a-getattr-default-does-not-guard-the-plain-read-after-it",
        """
        from vllm.mod import probe_then_read

        def test_x():
            probe_then_read(SimpleNamespace(other=1))
        """,
        frozenset({(ERROR, "out.block_state"), (STALE, "other")}),
    ),
    Case(
        "a-read-through-what-a-getattr-default-gave-is-guarded",
        """
        from vllm.mod import probe_only

        def test_x():
            probe_only(SimpleNamespace(other=1))
        """,
        frozenset({(STALE, "other")}),
    ),
    Case(
        "a-method-bound-to-the-namespace-runs-on-it",
        """
        import types
        from vllm.mod import Impl

        def test_x():
            impl = SimpleNamespace()
            impl._inner = types.MethodType(Impl._inner, impl)
            Impl.forward(impl, 1)
        """,
        frozenset({(SELF, "width")}),
    ),
    Case(
        "a-method-bound-to-the-namespace-finds-its-fields",
        """
        import types
        from vllm.mod import Impl

        def test_x():
            impl = SimpleNamespace(width=1)
            impl._inner = types.MethodType(Impl._inner, impl)
            Impl.forward(impl, 1)
        """,
        frozenset(),
    ),
    Case(
        "a-helper-handed-self-and-a-name-may-set-that-name",
        """
        from vllm.mod import Refill

        def test_x():
            ns = SimpleNamespace()
            Refill.build(ns)
            Refill.use(ns)
        """,
        frozenset(),
    ),
    Case(
        "a-helper-handed-self-and-another-name-does-not-set-this-one",
        """
        from vllm.mod import Refill

        def test_x():
            ns = SimpleNamespace()
            Refill.build_other(ns)
            Refill.use(ns)
        """,
        frozenset({(SELF, "weight")}),
    ),
    Case(
        "a-patch-of-a-name-the-text-does-not-settle-makes-reads-notes",
        """
        from unittest.mock import patch
        import vllm.mod as mod
        from vllm.mod import sized_client

        def test_x(request):
            with patch.object(mod, request.param):
                sized_client(SimpleNamespace(parallel=SimpleNamespace()))
        """,
        frozenset({(NOTE, "cfg.parallel.size")}),
    ),
    Case(
        "a-patch-of-a-name-its-parametrize-cases-give-replaces-that-name",
        """
        import pytest
        from unittest.mock import patch
        import vllm.mod as mod
        from vllm.mod import sized_client

        @pytest.mark.parametrize("name", ["cfg_size"])
        def test_x(name):
            with patch.object(mod, name):
                sized_client(SimpleNamespace(parallel=SimpleNamespace()))
        """,
        frozenset(),
    ),
    Case(
        "an-argument-a-wrapper-passes-on-with-star-args-is-read-where-it-lands",
        """
        from vllm.mod import Fwd

        def test_x():
            Fwd(1, SimpleNamespace(spec=SimpleNamespace()))
            Fwd(1, cfg=SimpleNamespace(spec=SimpleNamespace(other=1)))
        """,
        frozenset({(ERROR, "args[1].spec.width"), (ERROR, "kwargs['cfg'].spec.width")}),
    ),
    Case(
        # Handed on through ``*args`` where the walk cannot see what reads it: no field of
        # it is judged unread.
        "an-argument-a-wrapper-hands-outside-the-tree-is-not-stale",
        """
        from vllm.mod import ExtWrap

        def test_x():
            ExtWrap(SimpleNamespace(unused=1))
            ExtWrap(cfg=SimpleNamespace(unused=2))
        """,
        frozenset(),
    ),
    Case(
        "an-argument-a-wrapper-passes-on-holds-what-is-read",
        """
        from vllm.mod import Fwd

        def test_x():
            Fwd(1, SimpleNamespace(spec=SimpleNamespace(width=2)))
        """,
        frozenset(),
    ),
    Case(
        "a-method-bound-to-a-field-of-the-namespace-replays-where-the-field-is-called",
        """
        import types
        from vllm.mod import Impl

        def test_x():
            impl = SimpleNamespace()
            impl.forward = types.MethodType(Impl.forward, impl)
            impl.forward(1)
        """,
        frozenset({(SELF, "_inner"), (NOTE, "width")}),
    ),
    Case(
        "a-method-bound-to-a-field-never-called-replays-nothing",
        """
        import types
        from vllm.mod import Impl

        def test_x():
            impl = SimpleNamespace()
            impl.forward = types.MethodType(Impl.forward, impl)
        """,
        frozenset(),
    ),
    Case(
        "an-object-the-test-built-and-calls-runs-its-class-s-call",
        """
        from vllm.mod import Caller

        def test_x():
            c = Caller()
            c(SimpleNamespace(attn=SimpleNamespace(width=1)))
        """,
        frozenset({(ERROR, "layer.attn.depth"), (STALE, "width")}),
    ),
    Case(
        "an-object-the-test-built-and-calls-finds-the-fields-its-call-reads",
        """
        from vllm.mod import Caller

        def test_x():
            c = Caller()
            c(SimpleNamespace(attn=SimpleNamespace(depth=1)))
        """,
        frozenset(),
    ),
    Case(
        "a-namespace-a-helper-builds-in-the-call-is-new-there",
        """
        from vllm.mod import fill_b, read_b

        def _make():
            return SimpleNamespace(a=1)

        def test_x():
            fill_b(_make())
            read_b(_make())
        """,
        frozenset({(ERROR, "runner.b"), (STALE, "a")}),
    ),
    Case(
        "a-patch-a-test-class-s-own-helper-makes-holds-for-its-caller",
        """
        import vllm.mod as mod
        from vllm.mod import sized_client

        class TestX:
            def _patch(self, monkeypatch):
                monkeypatch.setattr(mod, "cfg_size", lambda cfg: 0)

            def test_x(self, monkeypatch):
                self._patch(monkeypatch)
                sized_client(SimpleNamespace(parallel=SimpleNamespace()))
        """,
        frozenset(),
    ),
    Case(
        "a-test-class-s-helper-the-test-does-not-call-patches-nothing-for-it",
        """
        import vllm.mod as mod
        from vllm.mod import sized_client

        class TestX:
            def _patch(self, monkeypatch):
                monkeypatch.setattr(mod, "cfg_size", lambda cfg: 0)

            def test_x(self, monkeypatch):
                sized_client(SimpleNamespace(parallel=SimpleNamespace()))
        """,
        frozenset({(ERROR, "cfg.parallel.size")}),
    ),
    Case(
        "a-helper-s-call-with-a-namespace-built-in-place-reads-as-notes",
        """
        from vllm.mod import fill_b, read_b

        def _make():
            return SimpleNamespace(a=1)

        def _helper():
            fill_b(_make())
            read_b(_make())

        def test_x():
            _helper()
        """,
        frozenset({(NOTE, "runner.b")}),
    ),
    Case(
        "made-self-twice-the-call-outside-pytest-raises-is-judged-on-its-own",
        """
        import pytest
        from vllm.mod import CfgRunner

        def test_x():
            ns = SimpleNamespace(cfg=SimpleNamespace(other=1))
            CfgRunner.init(ns)
            with pytest.raises(ValueError):
                CfgRunner.init(ns)
        """,
        frozenset({(ERROR, "self.cfg.extra")}),
    ),
    Case(
        "made-self-under-pytest-raises-of-what-only-a-patch-raises-reads-before-it-fail",
        """
        import pytest
        from unittest.mock import patch
        from vllm.mod import Proposer

        def test_x():
            class Stop(Exception):
                pass

            ns = SimpleNamespace(tables=SimpleNamespace(other=1), groups=[1])
            with patch("vllm.mod.dispatch", side_effect=Stop), pytest.raises(Stop):
                Proposer.propose(ns)
        """,
        frozenset({(ERROR, "self.tables.block_sizes"), (NOTE, "self.tables.after")}),
    ),
    Case(
        "made-self-under-pytest-raises-reads-after-a-patch-that-may-raise-are-notes",
        """
        import pytest
        from vllm.mod import Proposer

        def test_x(monkeypatch):
            class Stop(Exception):
                pass

            def fake(n):
                if n:
                    raise Stop

            monkeypatch.setattr("vllm.mod.dispatch", fake)
            ns = SimpleNamespace(tables=SimpleNamespace(other=1), groups=[1])
            with pytest.raises(Stop):
                Proposer.propose(ns)
        """,
        frozenset({(ERROR, "self.tables.block_sizes"), (NOTE, "self.tables.after")}),
    ),
    Case(
        "handed-a-read-after-a-callable-of-the-test-under-pytest-raises-is-a-note",
        """
        import pytest
        from vllm.mod import fetch

        def _start():
            raise ValueError("stop")

        def test_x():
            with pytest.raises(ValueError):
                fetch(SimpleNamespace(start=_start))
        """,
        frozenset({(NOTE, "runner.size")}),
    ),
    Case(
        "handed-a-read-after-a-lambda-stating-its-result-under-pytest-raises-fails",
        """
        import pytest
        from vllm.mod import fetch

        def test_x():
            with pytest.raises(ValueError):
                fetch(SimpleNamespace(start=lambda: None))
        """,
        frozenset({(ERROR, "runner.size")}),
    ),
    Case(
        "handed-a-read-after-a-callable-of-the-test-outside-pytest-raises-fails",
        """
        from vllm.mod import fetch

        def test_x():
            fetch(SimpleNamespace(start=lambda: None))
        """,
        frozenset({(ERROR, "runner.size")}),
    ),
    Case(
        "handed-code-it-met-in-the-other-arm-of-the-test-s-if-did-not-fill-it",
        """
        from vllm.mod import fetch, release

        def test_x(fail):
            runner = SimpleNamespace(start=lambda: None, instance_id=1)
            if fail:
                release(runner)
            else:
                fetch(runner)
        """,
        frozenset({(ERROR, "runner.size")}),
    ),
    Case(
        "handed-code-it-met-in-an-arm-that-returns-did-not-fill-it",
        """
        from vllm.mod import fetch, release

        def test_x(fail):
            runner = SimpleNamespace(start=lambda: None, instance_id=1)
            if fail:
                release(runner)
                return
            fetch(runner)
        """,
        frozenset({(ERROR, "runner.size")}),
    ),
    Case(
        "handed-code-it-met-in-an-arm-that-goes-on-may-have-filled-it",
        """
        from vllm.mod import fetch, fill_size

        def test_x(flag):
            runner = SimpleNamespace(start=lambda: None)
            if flag:
                fill_size(runner)
            fetch(runner)
        """,
        frozenset(),
    ),
    Case(
        "handed-code-it-met-in-an-arm-that-goes-on-left-it-as-built",
        """
        from vllm.mod import fetch, release

        def test_x(flag):
            runner = SimpleNamespace(start=lambda: None, instance_id=1)
            if flag:
                release(runner)
            fetch(runner)
        """,
        frozenset({(ERROR, "runner.size")}),
    ),
    Case(
        "made-self-an-enum-member-the-test-states-decides-the-branch",
        """
        from vllm.mod import Kind, Modes

        def test_x():
            ns = SimpleNamespace(cfg=SimpleNamespace(backend=Kind.FLASH))
            Modes.by_backend(ns)
        """,
        frozenset({(ERROR, "self.cfg.flash_only")}),
    ),
    Case(
        "made-self-an-enum-member-the-test-states-skips-the-other-branch",
        """
        from vllm.mod import Kind, Modes

        def test_x():
            ns = SimpleNamespace(cfg=SimpleNamespace(backend=Kind.TRITON))
            Modes.by_backend(ns)
        """,
        frozenset(),
    ),
    Case(
        "made-self-a-nested-field-set-twice-states-neither-value",
        """
        from vllm.mod import Modes

        def test_x():
            ns = SimpleNamespace(cfg=SimpleNamespace(mode="a"))
            ns.cfg.mode = "b"
            Modes.pick(ns)
        """,
        frozenset({(NOTE, "self.cfg.b_only")}),
    ),
    Case(
        "handed-arithmetic-the-test-states-is-never-none",
        """
        from vllm.mod import slots

        def test_x(n):
            cfg = SimpleNamespace(spec=SimpleNamespace(tokens=n - 1))
            slots(cfg)
        """,
        frozenset({(ERROR, "config.spec.extra_slots")}),
    ),
    Case(
        "handed-a-none-the-test-states-returns-early",
        """
        from vllm.mod import slots

        def test_x():
            cfg = SimpleNamespace(spec=SimpleNamespace(tokens=None))
            slots(cfg)
        """,
        frozenset(),
    ),
    Case(
        "handed-a-field-the-callee-rewrites-holds-the-new-value",
        """
        from vllm.mod import rewrite

        def test_x():
            cfg = SimpleNamespace(mode="off", other=1)
            rewrite(cfg)
        """,
        frozenset({(ERROR, "cfg.on_only"), (STALE, "other")}),
    ),
    Case(
        "handed-a-field-one-arm-rewrites-leaves-the-others-known",
        """
        from vllm.mod import maybe_rewrite

        def test_x(flag):
            cfg = SimpleNamespace(size=0)
            maybe_rewrite(cfg, flag)
        """,
        frozenset(),
    ),
    Case(
        "handed-a-field-one-arm-rewrites-is-known-no-more",
        """
        from vllm.mod import maybe_resize

        def test_x(flag):
            cfg = SimpleNamespace(size=0)
            maybe_resize(cfg, flag)
        """,
        frozenset({(NOTE, "cfg.rest")}),
    ),
    Case(
        "handed-a-guard-on-a-link-the-namespace-lacks-goes-on-past-its-return",
        """
        from vllm.mod import draft_load

        def test_x():
            cfg = SimpleNamespace(spec=SimpleNamespace(other=1), load=SimpleNamespace(x=1))
            draft_load(cfg)
        """,
        frozenset(
            {
                (ERROR, "config.spec.draft_load"),
                (ERROR, "config.load.load_format"),
                (STALE, "other"),
                (STALE, "x"),
            }
        ),
    ),
    Case(
        "handed-a-guard-on-a-link-the-namespace-holds-may-return",
        """
        from vllm.mod import draft_load

        def test_x(value):
            cfg = SimpleNamespace(spec=SimpleNamespace(draft_load=value), load=SimpleNamespace(x=1))
            draft_load(cfg)
        """,
        frozenset({(NOTE, "config.load.load_format"), (STALE, "x")}),
    ),
    Case(
        "handed-an-or-operand-after-a-link-the-namespace-lacks-runs",
        """
        from vllm.mod import device_of

        def test_x():
            cfg = SimpleNamespace(load=SimpleNamespace(x=1), device_cfg=SimpleNamespace(x=1))
            device_of(cfg)
        """,
        frozenset(
            {(ERROR, "config.load.device"), (ERROR, "config.device_cfg.device"), (STALE, "x")}
        ),
    ),
    Case(
        "handed-an-or-operand-after-a-link-the-namespace-holds-may-not-run",
        """
        from vllm.mod import device_of

        def test_x(dev):
            cfg = SimpleNamespace(load=SimpleNamespace(device=dev), device_cfg=SimpleNamespace(x=1))
            device_of(cfg)
        """,
        frozenset({(NOTE, "config.device_cfg.device"), (STALE, "x")}),
    ),
    Case(
        "on-an-instance-an-array-the-test-sets-of-any-size-is-not-none",
        """
        import torch
        from vllm.mod import Window

        def test_x(n):
            w = Window.__new__(Window)
            w.lookback = torch.full((n, 3), -1)
            w.gather(SimpleNamespace(idx=1))
        """,
        frozenset({(ERROR, "batch.positions"), (STALE, "idx")}),
    ),
    Case(
        "on-an-instance-a-none-the-test-sets-returns-early",
        """
        from vllm.mod import Window

        def test_x():
            w = Window.__new__(Window)
            w.lookback = None
            w.gather(SimpleNamespace(idx=1))
        """,
        frozenset({(STALE, "idx")}),
    ),
    Case(
        "on-an-instance-a-field-set-in-a-branch-states-nothing",
        """
        import torch
        from vllm.mod import Window

        def test_x(flag):
            w = Window.__new__(Window)
            w.lookback = None
            if flag:
                w.lookback = torch.zeros(2)
            w.gather(SimpleNamespace(idx=1))
        """,
        frozenset({(NOTE, "batch.positions"), (STALE, "idx")}),
    ),
    Case(
        "handed-an-array-field-of-any-size-is-not-none",
        """
        import torch
        from vllm.mod import gather_buf

        def test_x(n):
            runner = SimpleNamespace(buf=torch.full((n, 2), 0))
            gather_buf(runner, SimpleNamespace(idx=1))
        """,
        frozenset({(ERROR, "batch.positions"), (STALE, "idx")}),
    ),
    Case(
        "made-self-a-lambda-of-the-test-returns-what-its-body-states",
        """
        from vllm.mod import Indexer

        def test_x():
            ns = SimpleNamespace(_metadata=lambda: (1, 2))
            Indexer.forward(ns, None)
        """,
        frozenset({(SELF, "dtype")}),
    ),
    Case(
        "made-self-a-mock-of-the-test-returns-its-return-value",
        """
        from unittest.mock import Mock
        from vllm.mod import Indexer

        def test_x():
            ns = SimpleNamespace(_metadata=Mock(return_value=(1, 2)))
            Indexer.forward(ns, None)
        """,
        frozenset({(SELF, "dtype")}),
    ),
    Case(
        "made-self-a-lambda-of-the-test-returning-none-returns-early",
        """
        from vllm.mod import Indexer

        def test_x():
            ns = SimpleNamespace(_metadata=lambda: None)
            Indexer.forward(ns, None)
        """,
        frozenset(),
    ),
    Case(
        "on-an-instance-an-async-mock-of-the-test-gives-its-return-value",
        """
        import asyncio
        from unittest.mock import AsyncMock
        from vllm.mod import Server

        def test_x():
            server = Server.__new__(Server)
            server._check = AsyncMock(return_value=None)
            server.client = SimpleNamespace(other=1)
            asyncio.run(server.serve(SimpleNamespace(model="m")))
        """,
        frozenset({(ERROR, "self.client.admit")}),
    ),
    Case(
        "on-an-instance-an-async-mock-without-a-return-value-gives-a-mock",
        """
        import asyncio
        from unittest.mock import AsyncMock
        from vllm.mod import Server

        def test_x():
            server = Server.__new__(Server)
            server._check = AsyncMock()
            server.client = SimpleNamespace(other=1)
            asyncio.run(server.serve(SimpleNamespace(model="m")))
        """,
        frozenset(),
    ),
    Case(
        "a-detached-task-runs-through-the-await-of-an-async-mock-of-the-test",
        """
        import asyncio
        from unittest.mock import AsyncMock
        from vllm.mod import Server

        async def test_x():
            server = object.__new__(Server)
            server._check = AsyncMock(return_value=None)
            server.client = SimpleNamespace(other=1)
            task = asyncio.create_task(server.serve(SimpleNamespace(model="m")))
            task.cancel()
        """,
        frozenset({(ERROR, "self.client.admit")}),
    ),
    Case(
        "made-self-under-pytest-raises-a-read-after-a-callable-of-the-test-is-a-note",
        """
        import pytest
        from vllm.mod import Runs

        def test_x():
            ns = SimpleNamespace(step=lambda: compute())
            with pytest.raises(ValueError):
                Runs.run(ns)
        """,
        frozenset({(NOTE, "size")}),
    ),
    Case(
        "made-self-under-pytest-raises-a-lambda-that-states-its-result-does-not-raise",
        """
        import pytest
        from vllm.mod import Runs

        def test_x():
            ns = SimpleNamespace(step=lambda: None)
            with pytest.raises(ValueError):
                Runs.run(ns)
        """,
        frozenset({(SELF, "size")}),
    ),
    Case(
        "handed-a-dict-the-test-states-a-module-constant-and-a-callee-s-result-decide",
        """
        from vllm.mod import pick_backend

        def test_x():
            cfg = SimpleNamespace(extra={"backend": "fast"})
            pick_backend(cfg)
        """,
        frozenset({(ERROR, "cfg.fast_only")}),
    ),
    Case(
        "handed-a-dict-the-test-states-without-the-key-gives-the-default",
        """
        from vllm.mod import pick_backend

        def test_x():
            cfg = SimpleNamespace(extra={"other": "fast"})
            pick_backend(cfg)
        """,
        frozenset(),
    ),
    Case(
        "handed-a-literal-in-a-list-the-test-states-takes-the-branch",
        """
        from vllm.mod import woken

        def test_x():
            woken(SimpleNamespace(flag=True), ["weights"])
        """,
        frozenset({(ERROR, "cfg.weights_only")}),
    ),
    Case(
        "handed-a-literal-not-in-a-list-the-test-states-skips-the-branch",
        """
        from vllm.mod import woken

        def test_x():
            woken(SimpleNamespace(flag=True), ["kv_cache"])
        """,
        frozenset(),
    ),
    Case(
        "helper-variants-of-a-namespace-set-on-a-real-object-it-returns-lack-a-field",
        """
        import pytest
        from vllm.mod import HeldConfig, Platform

        def _config(*, kind, layers=("linear",)):
            model_config = SimpleNamespace(
                arch=kind, text=SimpleNamespace(kind=kind, layers=layers)
            )
            config = HeldConfig()
            config.model_config = model_config
            return config

        @pytest.mark.parametrize(("kind", "layers"), [("a", ("linear",)), ("b", ("mamba",))])
        def test_x(kind, layers):
            config = _config(kind=kind, layers=layers)
            Platform.check_config(config)
        """,
        frozenset({(ERROR, "vllm_config.model_config.hf_config")}),
    ),
    Case(
        "helper-variants-of-a-namespace-set-on-a-real-object-it-returns-hold-the-field",
        """
        import pytest
        from vllm.mod import HeldConfig, Platform

        def _config(*, kind, layers=("linear",)):
            model_config = SimpleNamespace(
                arch=kind, text=SimpleNamespace(kind=kind, layers=layers), hf_config=None
            )
            config = HeldConfig()
            config.model_config = model_config
            return config

        @pytest.mark.parametrize(("kind", "layers"), [("a", ("linear",)), ("b", ("mamba",))])
        def test_x(kind, layers):
            config = _config(kind=kind, layers=layers)
            Platform.check_config(config)
        """,
        frozenset(),
    ),
    Case(
        "a-method-bound-in-a-fixture-runs-where-the-test-calls-it",
        """
        import types
        import pytest
        from vllm.mod import Impl

        @pytest.fixture
        def impl():
            ns = SimpleNamespace()
            ns._inner = types.MethodType(Impl._inner, ns)
            return ns

        def test_x(impl):
            impl._inner(1)
        """,
        frozenset({(SELF, "width")}),
    ),
    Case(
        "a-method-bound-in-a-helper-runs-where-the-caller-calls-it",
        """
        from vllm.mod import Impl

        def _impl():
            ns = SimpleNamespace()
            ns._inner = Impl._inner.__get__(ns, Impl)
            return ns

        def test_x():
            impl = _impl()
            impl._inner(1)
        """,
        frozenset({(SELF, "width")}),
    ),
    Case(
        "a-method-bound-in-a-helper-finds-what-the-caller-sets",
        """
        from vllm.mod import Impl

        def _impl():
            ns = SimpleNamespace()
            ns._inner = Impl._inner.__get__(ns, Impl)
            return ns

        def test_x():
            impl = _impl()
            impl.width = 2
            impl._inner(1)
        """,
        frozenset(),
    ),
    Case(
        "a-method-bound-in-a-fixture-no-test-calls-runs-nothing",
        """
        import types
        import pytest
        from vllm.mod import Impl

        @pytest.fixture
        def impl():
            ns = SimpleNamespace()
            ns._inner = types.MethodType(Impl._inner, ns)
            return ns

        def test_x(impl):
            assert impl is not None
        """,
        frozenset(),
    ),
    Case(
        "spec-mock-made-self-by-a-bound-method-raises-on-what-init-sets",
        """
        from unittest.mock import Mock
        from vllm.mod import Engine

        def test_x():
            engine = Mock(spec=Engine)
            engine.total = Engine.total.__get__(engine, Engine)
            engine.total()
        """,
        frozenset({(ERROR, "self.count")}),
    ),
    Case(
        "spec-mock-made-self-by-a-bound-method-finds-what-the-test-sets",
        """
        import types
        from unittest.mock import Mock
        from vllm.mod import Engine

        def test_x():
            engine = Mock(spec=Engine, count=1)
            engine.total = types.MethodType(Engine.total, engine)
            engine.total()
        """,
        frozenset(),
    ),
    Case(
        "made-self-a-helper-s-argument-every-call-builds-with-a-class-is-not-none",
        """
        from vllm.mod import Drafting

        class _Spec:
            pass

        def _run(speculator):
            Drafting.dummy(SimpleNamespace(speculator=speculator))

        def test_x():
            _run(_Spec.__new__(_Spec))

        def test_y():
            _run(_Spec())
        """,
        frozenset({(SELF, "spec_config")}),
    ),
    Case(
        "made-self-a-helper-s-argument-a-function-returns-may-be-none",
        """
        from vllm.mod import Drafting

        def make_spec():
            return None

        def _run(speculator):
            Drafting.dummy(SimpleNamespace(speculator=speculator))

        def test_x():
            _run(make_spec())
        """,
        frozenset({(NOTE, "spec_config")}),
    ),
    Case(
        "made-self-under-pytest-raises-of-the-test-s-own-class-vllm-s-raise-is-not-it",
        """
        import pytest
        from vllm.mod import Stepper

        class _Stop(Exception):
            pass

        def _hook():
            raise _Stop

        def test_x(flag):
            with pytest.raises(_Stop):
                Stepper.step(SimpleNamespace(hook=_hook), flag)
        """,
        frozenset({(SELF, "size"), (NOTE, "after")}),
    ),
    Case(
        "made-self-under-pytest-raises-of-a-builtin-class-vllm-s-raise-may-be-it",
        """
        import pytest
        from vllm.mod import Stepper

        def _hook():
            raise ValueError("stop")

        def test_x(flag):
            with pytest.raises(ValueError):
                Stepper.step(SimpleNamespace(hook=_hook), flag)
        """,
        frozenset({(NOTE, "size"), (NOTE, "after")}),
    ),
    Case(
        # Each run of a parametrized test hands the call the namespace it builds then: the
        # arm ``mixed=True`` takes is that run's path, so its read fails that run.
        "made-self-a-parametrized-argument-decides-the-arm-of-one-run",
        """
        import pytest
        from vllm.mod import Mixer

        @pytest.mark.parametrize("mixed", [False, True])
        def test_x(mixed):
            impl = SimpleNamespace(base=1)
            metadata = SimpleNamespace(mixed=mixed)
            Mixer.forward(impl, 1, metadata)
        """,
        frozenset({(SELF, "mix_scale")}),
    ),
    Case(
        # Values of different types have no common value, but no run takes the arm.
        "made-self-a-parametrized-argument-no-run-of-which-takes-the-arm-stays-a-note",
        """
        import pytest
        from vllm.mod import Mixer

        @pytest.mark.parametrize("mixed", [False, 0])
        def test_x(mixed):
            impl = SimpleNamespace(base=1)
            metadata = SimpleNamespace(mixed=mixed)
            Mixer.forward(impl, 1, metadata)
        """,
        frozenset({(NOTE, "mix_scale")}),
    ),
    Case(
        # A helper's result asserted per parametrize case: the case whose expected value is
        # not the early return's (``n``, 8) rules that return out of its run.
        "made-self-through-a-helper-a-parametrize-case-rules-out-the-early-return",
        """
        import pytest
        from vllm.mod import Gate

        def _clip(start, n):
            ns = SimpleNamespace(block_size=16)
            return Gate.clip(ns, start, n)

        @pytest.mark.parametrize(("n", "expected"), [(8, 24), (4, 4)])
        def test_x(s, n, expected):
            assert _clip(s, n) == expected
        """,
        frozenset({(SELF, "new_flag")}),
    ),
    Case(
        "made-self-through-a-helper-every-parametrize-case-may-take-the-early-return",
        """
        import pytest
        from vllm.mod import Gate

        def _clip(start, n):
            ns = SimpleNamespace(block_size=16)
            return Gate.clip(ns, start, n)

        @pytest.mark.parametrize(("n", "expected"), [(8, 8), (4, 4)])
        def test_x(s, n, expected):
            assert _clip(s, n) == expected
        """,
        frozenset({(NOTE, "new_flag")}),
    ),
    Case(
        # The arm that may return reads ``decode_tokens`` before it may; past the ``if`` the
        # call reads it again: every path reads it, whichever way ``cache`` goes.
        "handed-a-read-on-both-sides-of-an-undecided-early-return-is-on-every-path",
        """
        from vllm.mod import covered

        def test_x(cache):
            covered(SimpleNamespace(total=1), cache)
        """,
        frozenset({(ERROR, "md.decode_tokens")}),
    ),
    Case(
        # Here the arm may return before its read: a path that returns reads it nowhere.
        "handed-a-read-the-leaving-arm-makes-only-past-its-exit-stays-a-note",
        """
        from vllm.mod import uncovered

        def test_x(cache):
            uncovered(SimpleNamespace(total=1), cache)
        """,
        frozenset({(NOTE, "md.decode_tokens")}),
    ),
    Case(
        "a-parameter-one-arm-rebinds-still-holds-the-namespace-on-the-other",
        """
        from vllm.mod import CopyingDrafter

        def test_x(dcp):
            CopyingDrafter(
                SimpleNamespace(
                    speculative_config=SimpleNamespace(dcp_size=dcp),
                    parallel_config=SimpleNamespace(dcp_size=1),
                )
            )
        """,
        frozenset({(NOTE, "vllm_config.parallel_config.use_ubatching")}),
    ),
    Case(
        "a-parameter-every-arm-rebinds-holds-the-namespace-on-no-path-past-the-if",
        """
        from vllm.mod import EveryArmDrafter

        def test_x(dcp, other):
            EveryArmDrafter(
                SimpleNamespace(
                    speculative_config=SimpleNamespace(dcp_size=dcp),
                    parallel_config=SimpleNamespace(),
                ),
                other,
            )
        """,
        frozenset(),
    ),
    Case(
        "a-parameter-a-loop-of-one-arm-rebinds-is-not-followed-past-the-if",
        """
        from vllm.mod import LoopDrafter

        def test_x(dcp, others):
            LoopDrafter(
                SimpleNamespace(
                    speculative_config=SimpleNamespace(dcp_size=dcp),
                    parallel_config=SimpleNamespace(),
                ),
                others,
            )
        """,
        frozenset(),
    ),
    Case(
        "a-local-bound-to-a-kwargs-element-is-the-namespace-the-caller-passed-by-that-keyword",
        """
        from vllm.mod import EngineProc

        def test_x():
            EngineProc.run_engine(vllm_config=SimpleNamespace(shutdown_timeout=1))
        """,
        frozenset({(ERROR, "kwargs['vllm_config'].watchdog_config")}),
    ),
    Case(
        "a-local-bound-to-another-kwargs-element-is-not-the-namespace",
        """
        from vllm.mod import EngineProc

        def test_x(vllm_config):
            EngineProc.run_engine(
                vllm_config=vllm_config, other=SimpleNamespace(shutdown_timeout=1)
            )
        """,
        frozenset(),
    ),
    Case(
        "a-method-of-an-object-the-text-settles-the-class-of-is-walked-with-the-namespace",
        """
        from vllm.mod import refusals_of_a_copy

        def test_x():
            refusals_of_a_copy(SimpleNamespace(kernel_config=SimpleNamespace()))
        """,
        frozenset({(ERROR, "config.kernel_config.moe_backend")}),
    ),
    Case(
        "a-method-of-an-object-bound-twice-is-not-followed",
        """
        from vllm.mod import refusals_of_a_reassigned_spec

        def test_x(other):
            refusals_of_a_reassigned_spec(
                SimpleNamespace(kernel_config=SimpleNamespace()), other
            )
        """,
        frozenset(),
    ),
    Case(
        "namespace-set-through-a-local-bound-to-a-field-of-a-real-object-handed-on-lacks-a-field",
        """
        from vllm.mod import OuterConfig, read_text

        def test_x():
            config = OuterConfig()
            model_config = config.model_config
            model_config.text = SimpleNamespace(rank=1)
            read_text(config)
        """,
        frozenset({(ERROR, "vllm_config.model_config.text.topk")}),
    ),
    Case(
        "namespace-set-through-a-local-bound-to-a-field-of-a-real-object-handed-on-holds-it",
        """
        from vllm.mod import OuterConfig, read_text

        def test_x():
            config = OuterConfig()
            model_config = config.model_config
            model_config.text = SimpleNamespace(topk=1)
            read_text(config)
        """,
        frozenset(),
    ),
    Case(
        "class-a-static-method-returns-built-with-a-namespace-lacking-a-field",
        """
        from vllm.mod import MadeBackend

        def test_x():
            backend = MadeBackend
            builder_cls = backend.get_builder_cls()
            builder_cls(None, SimpleNamespace(rank=1))
            MadeBackend.get_builder_cls()(None, SimpleNamespace(rank=2))
        """,
        frozenset({(ERROR, "vllm_config.topk"), (STALE, "rank")}),
    ),
    Case(
        "object-a-static-method-returns-called-with-a-namespace-is-not-a-constructor",
        """
        from vllm.mod import MadeBackend

        def test_x():
            builder = MadeBackend.get_builder()
            builder(None, SimpleNamespace(rank=1))
        """,
        frozenset(),
    ),
    Case(
        "helper-default-under-is-none-keeps-the-namespace-handed-to-it",
        """
        from vllm.mod import Coordinated

        def _default():
            return object()

        def _make(coord=None):
            if coord is None:
                coord = _default()
            return Coordinated(coord)

        def test_x():
            _make(coord=SimpleNamespace(rank=1))
        """,
        frozenset({(ERROR, "coord.size"), (STALE, "rank")}),
    ),
    Case(
        "namespace-set-by-object-setattr-on-a-real-object-whose-method-reads-it-lacks-a-field",
        """
        from vllm.mod import Holds

        def _make():
            holder = Holds.__new__(Holds)
            object.__setattr__(holder, "cfg", SimpleNamespace(height=1))
            return holder

        def test_x():
            _make().width()
            holder = Holds()
            setattr(holder, "cfg", SimpleNamespace(height=2))
            holder.width()
        """,
        frozenset({(ERROR, "self.cfg.width")}),
    ),
    Case(
        "namespace-set-by-object-setattr-on-a-real-object-whose-method-reads-it-holds-it",
        """
        from vllm.mod import Holds

        def test_x():
            holder = Holds()
            object.__setattr__(holder, "cfg", SimpleNamespace(width=1))
            holder.width()
        """,
        frozenset(),
    ),
    Case(
        "helper-rebinding-under-another-condition-drops-the-namespace",
        """
        from vllm.mod import Coordinated

        def _default():
            return object()

        def _make(coord=None, fresh=False):
            if fresh:
                coord = _default()
            return Coordinated(coord)

        def test_x():
            _make(coord=SimpleNamespace(rank=1), fresh=True)
        """,
        frozenset(),
    ),
    Case(
        "a-method-bound-in-a-fixture-runs-where-a-local-alias-of-it-is-called",
        """
        import pytest
        from vllm.mod import Impl

        @pytest.fixture
        def impl():
            ns = SimpleNamespace()
            ns._inner = Impl._inner.__get__(ns)
            return ns

        def test_x(impl):
            runner = impl
            runner._inner(1)
        """,
        frozenset({(SELF, "width")}),
    ),
    Case(
        "constructor-argument-stored-as-a-field-is-read-by-a-later-method",
        """
        from vllm.mod import Stores, span_of

        def _make(coord):
            built = Stores(coord=coord)
            return built

        def _returned():
            coord = SimpleNamespace(width=1, height=3)
            return Stores(coord=coord, scale=2)

        def test_x():
            direct = Stores(coord=SimpleNamespace(height=1))
            direct.span()
            made = _make(SimpleNamespace(height=2))
            span_of(made.coord)
            built = _returned()
            built.span()
        """,
        frozenset({(ERROR, "self.coord.width"), (ERROR, "coord.width")}),
    ),
    Case(
        "constructor-argument-not-stored-plainly-is-not-followed-into-later-methods",
        """
        from vllm.mod import Stores, StoresACopy, StoresAndFills, StoresOnOnePath

        def test_x():
            copied = StoresACopy(coord=SimpleNamespace(height=1))
            copied.span()
            some = StoresOnOnePath(coord=SimpleNamespace(height=2), keep=True)
            some.span()
            filled = StoresAndFills(coord=SimpleNamespace(height=3))
            filled.span()
            replaced = Stores(coord=SimpleNamespace(height=4))
            replaced.coord = SimpleNamespace(width=1)
            replaced.span()
        """,
        frozenset(),
    ),
    Case(
        "namespace-made-self-whose-list-item-lacks-the-field-read-through-an-element",
        """
        from vllm.mod import DraftLoader

        def test_x():
            layer = SimpleNamespace(ffn=SimpleNamespace(other=1))
            draft = SimpleNamespace(model=SimpleNamespace(layers=[layer]))
            DraftLoader.load(draft)
        """,
        frozenset({(ERROR, "self.model.layers[].ffn.use_mega")}),
    ),
    Case(
        "namespace-made-self-whose-list-item-holds-the-field-read-through-an-element",
        """
        from vllm.mod import DraftLoader

        def test_x():
            layer = SimpleNamespace(ffn=SimpleNamespace(use_mega=True))
            draft = SimpleNamespace(model=SimpleNamespace(layers=[layer]))
            DraftLoader.load(draft)
        """,
        frozenset(),
    ),
    Case(
        "stub-list-item-lacks-the-field-a-method-returning-an-element-is-read-for",
        """
        from vllm.mod import Cached

        def test_x():
            group = object.__new__(Cached)
            handle = SimpleNamespace(view=1)
            group.caches = [handle]
            group.convert(0)
        """,
        frozenset({(ERROR, "self.caches[].runtime")}),
    ),
    Case(
        "stub-list-item-holds-the-field-a-method-returning-an-element-is-read-for",
        """
        from vllm.mod import Cached

        def test_x():
            group = object.__new__(Cached)
            group.caches = [SimpleNamespace(runtime=SimpleNamespace(rows=1))]
            group.convert(0)
        """,
        frozenset(),
    ),
    Case(
        "stub-list-of-two-items-one-holding-the-field-the-element-may-be-that-one",
        """
        from vllm.mod import Cached

        def test_x():
            group = object.__new__(Cached)
            group.caches = [SimpleNamespace(runtime=SimpleNamespace(rows=1)), SimpleNamespace()]
            group.convert(0)
        """,
        frozenset({(NOTE, "self.caches[].runtime")}),
    ),
    Case(
        "stub-list-of-two-items-both-lacking-the-field-read-through-an-element",
        """
        from vllm.mod import Cached

        def test_x():
            group = object.__new__(Cached)
            group.caches = [SimpleNamespace(view=1), SimpleNamespace(view=2)]
            group.convert(0)
        """,
        frozenset({(ERROR, "self.caches[].runtime")}),
    ),
    Case(
        "stub-list-of-one-item-read-in-a-loop-over-it-that-surely-runs-lacks-the-field",
        """
        from vllm.mod import Stacked

        def test_x():
            stack = object.__new__(Stacked)
            stack.layers = [SimpleNamespace(height=1)]
            stack.total()
        """,
        frozenset({(ERROR, "self.layers[].width")}),
    ),
    Case(
        "stub-list-read-in-a-loop-over-it-whose-items-hold-the-field",
        """
        from vllm.mod import Stacked

        def test_x():
            stack = object.__new__(Stacked)
            stack.layers = [SimpleNamespace(width=1), SimpleNamespace(width=2)]
            stack.total()
        """,
        frozenset(),
    ),
    Case(
        "namespaces-appended-to-a-list-handed-on-lack-the-field-a-comprehension-reads",
        """
        from vllm.mod import commit_layers

        def test_x():
            layers = []
            for i in range(2):
                layer = SimpleNamespace(kv=i)
                layers.append(layer)
            commit_layers(layers)
        """,
        frozenset({(ERROR, "layers[].records")}),
    ),
    Case(
        "namespaces-appended-to-a-list-handed-on-hold-the-field-a-comprehension-reads",
        """
        from vllm.mod import commit_layers

        def test_x():
            layers = []
            for i in range(2):
                layer = SimpleNamespace(records=SimpleNamespace(key=i))
                layers.append(layer)
            commit_layers(layers)
        """,
        frozenset(),
    ),
    Case(
        "namespaces-appended-to-a-list-then-given-the-field-through-an-element-are-not-judged",
        """
        from vllm.mod import commit_layers

        def test_x():
            layers = []
            for i in range(2):
                layers.append(SimpleNamespace(kv=i))
                layers[-1].records = SimpleNamespace(key=i)
            commit_layers(layers)
        """,
        frozenset(),
    ),
    Case(
        "a-method-the-class-hands-out-bound-runs-on-the-object-through-its-attribute",
        """
        from vllm.mod import Fp8, Loads

        def _make(quant=None):
            return Loads(quant or Fp8(), manager=SimpleNamespace(other=1))

        def test_x():
            layer = _make()
            param = getattr(layer, "weight")
            param.weight_loader(param, 1)
            direct = Loads(Fp8(), manager=SimpleNamespace(other=2))
            direct.weight.weight_loader(None, 1)
        """,
        frozenset({(ERROR, "self.manager.shared")}),
    ),
    Case(
        "a-method-on-an-attribute-the-class-does-not-hand-out-or-the-test-set-is-not-judged",
        """
        from vllm.mod import Fp8, KeepsLoader, Loads, Slot

        def test_x():
            kept = KeepsLoader(Fp8(), manager=SimpleNamespace(other=1))
            param = kept.weight
            param.weight_loader(param, 1)
            layer = Loads(Fp8(), manager=SimpleNamespace(other=2))
            layer.weight = Slot(weight_loader=print)
            layer.weight.weight_loader(None, 1)
        """,
        frozenset(),
    ),
    Case(
        "constructor-arguments-stored-plainly-decide-the-branches-of-a-later-method",
        """
        from vllm.mod import Fp8, Loads, Mx

        def test_x():
            layer = Loads(Fp8(), manager=SimpleNamespace(other=1))
            layer.weight_loader(None, 1)
            skipped = Loads(Mx(), manager=SimpleNamespace(other=2))
            skipped.weight_loader(None, 1)
        """,
        frozenset({(ERROR, "self.manager.shared")}),
    ),
    Case(
        "constructor-arguments-that-do-not-settle-a-later-method-s-branch-leave-notes",
        """
        from vllm.mod import Fp8, Loads, LoadsAgain, SizedFp8

        def _make(quant=None):
            return Loads(quant or Fp8(), manager=SimpleNamespace(other=1))

        def test_x(quant):
            given = _make(quant=Fp8())
            given.weight_loader(None, 1)
            unknown = Loads(quant, manager=SimpleNamespace(other=2))
            unknown.weight_loader(None, 1)
            sized = Loads(SizedFp8(), manager=SimpleNamespace(other=3))
            sized.weight_loader(None, 1)
            again = LoadsAgain(Fp8(), manager=SimpleNamespace(other=4))
            again.weight_loader(None, 1)

        def test_y(monkeypatch):
            monkeypatch.setattr(Fp8, "get_name", classmethod(lambda cls: "mxfp4"))
            patched = Loads(Fp8(), manager=SimpleNamespace(other=5))
            patched.weight_loader(None, 1)
        """,
        frozenset({(NOTE, "self.manager.shared")}),
    ),
    Case(
        "a-namespace-earlier-code-left-as-built-is-judged",
        """
        from vllm.mod import fetch, release

        def test_x():
            runner = SimpleNamespace(start=lambda: None, instance_id=1)
            release(runner)
            fetch(runner)
        """,
        frozenset({(ERROR, "runner.size")}),
    ),
    Case(
        "a-namespace-earlier-code-stores-the-field-on-holds-it",
        """
        from vllm.mod import fetch, fill_size

        def test_x():
            runner = SimpleNamespace(start=lambda: None)
            fill_size(runner)
            fetch(runner)
        """,
        frozenset(),
    ),
    Case(
        "a-namespace-earlier-code-sets-a-computed-name-on-may-hold-it",
        """
        from vllm.mod import fetch, set_flag_named

        def test_x():
            runner = SimpleNamespace(start=lambda: None)
            set_flag_named(runner, "size")
            fetch(runner)
        """,
        frozenset(),
    ),
    Case(
        "a-namespace-earlier-code-hands-on-may-be-filled-in",
        """
        from vllm.mod import fetch, keep_runner

        def test_x():
            runner = SimpleNamespace(start=lambda: None, instance_id=1)
            keep_runner(runner)
            fetch(runner)
        """,
        frozenset({(NOTE, "runner.size")}),
    ),
    Case(
        "a-namespace-earlier-code-left-as-built-read-off-the-path",
        """
        from vllm.mod import fetch_if, release

        def test_x(flag):
            runner = SimpleNamespace(instance_id=1)
            release(runner)
            fetch_if(runner, flag)
        """,
        frozenset({(NOTE, "runner.size")}),
    ),
    Case(
        "a-namespace-earlier-code-hands-on-a-read-in-a-block-it-prepares-is-a-note",
        """
        from vllm.mod import fetch_on, keep_runner

        def test_x():
            runner = SimpleNamespace(instance_id=1, on=True)
            keep_runner(runner)
            fetch_on(runner)
        """,
        frozenset({(NOTE, "runner.size")}),
    ),
    Case(
        "a-namespace-earlier-code-hands-on-read-off-the-path-is-a-note",
        """
        from vllm.mod import fetch_if, keep_runner

        def test_x(flag):
            runner = SimpleNamespace(instance_id=1)
            keep_runner(runner)
            fetch_if(runner, flag)
        """,
        frozenset({(NOTE, "runner.size")}),
    ),
    Case(
        "a-namespace-earlier-code-left-as-built-states-what-decides-the-branch",
        """
        from vllm.mod import fetch_on, release

        def test_x():
            runner = SimpleNamespace(instance_id=1, on=True)
            release(runner)
            fetch_on(runner)
        """,
        frozenset({(ERROR, "runner.size")}),
    ),
    Case(
        "a-holder-earlier-code-calls-a-method-of-names-what-it-lacks-as-a-note",
        """
        from unittest.mock import MagicMock
        from vllm.mod import pass_on, reset_meta

        def test_x():
            meta = MagicMock()
            meta.common = SimpleNamespace(other=1)
            reset_meta(meta)
            pass_on(1, meta)
        """,
        frozenset({(NOTE, "meta.common.num_actual_tokens")}),
    ),
    Case(
        "a-holder-method-the-test-bound-to-an-inert-lambda-leaves-it-as-built",
        """
        import types
        from unittest.mock import MagicMock
        from vllm.mod import pass_on, reset_meta

        def test_x():
            meta = MagicMock()
            meta.common = SimpleNamespace(other=1)
            meta.reset = types.MethodType(lambda self: None, meta)
            reset_meta(meta)
            pass_on(1, meta)
        """,
        frozenset({(ERROR, "meta.common.num_actual_tokens")}),
    ),
    Case(
        "a-holder-method-the-test-bound-to-a-lambda-that-calls-may-fill-it",
        """
        import types
        from unittest.mock import MagicMock
        from vllm.mod import pass_on, reset_meta

        def test_x():
            meta = MagicMock()
            meta.common = SimpleNamespace(other=1)
            meta.reset = types.MethodType(lambda self: self.flush(), meta)
            reset_meta(meta)
            pass_on(1, meta)
        """,
        frozenset({(NOTE, "meta.common.num_actual_tokens")}),
    ),
    Case(
        "a-namespace-a-stub-method-met-before-is-not-judged",
        """
        from vllm.mod import fetch

        def test_x():
            b = object.__new__(Builder)
            runner = SimpleNamespace(start=lambda: None, instance_id=1)
            b.guarded(runner)
            fetch(runner)
        """,
        frozenset(),
    ),
    Case(
        "a-module-level-namespace-is-the-object-a-test-hands-on",
        """
        from vllm.mod import build_common

        _COMMON = SimpleNamespace(query_start_loc=0)

        def test_x():
            build_common(_COMMON)
        """,
        frozenset({(ERROR, "common.num_actual_tokens")}),
    ),
    Case(
        "a-module-level-namespace-a-fixture-binds-again-is-not-followed-into-functions",
        """
        import pytest
        from vllm.mod import build_common

        _COMMON = SimpleNamespace(query_start_loc=0)

        @pytest.fixture(autouse=True)
        def _fresh():
            global _COMMON
            _COMMON = SimpleNamespace(num_actual_tokens=1)

        def test_x():
            build_common(_COMMON)
        """,
        frozenset(),
    ),
    Case(
        "a-module-level-namespace-as-a-helper-default-reaches-the-call-that-leaves-it-out",
        """
        from vllm.mod import build_common

        _COMMON = SimpleNamespace(query_start_loc=0)

        def _make(n=1, common=_COMMON):
            return build_common(common)

        def test_x():
            _make(n=2)
        """,
        frozenset({(ERROR, "common.num_actual_tokens")}),
    ),
    Case(
        "a-module-level-namespace-as-a-helper-default-every-call-replaces-is-not-followed",
        """
        from vllm.mod import build_common

        _COMMON = SimpleNamespace(query_start_loc=0)

        def _make(n=1, common=_COMMON):
            return build_common(common)

        def test_x(real_common):
            _make(2, real_common)
        """,
        frozenset(),
    ),
    Case(
        "a-namespace-a-replaced-function-returns-is-what-the-code-calling-it-gets",
        """
        import vllm.mod as mod
        from vllm.mod import configured

        def test_x(monkeypatch):
            config = SimpleNamespace(other=1)
            monkeypatch.setattr(mod, "get_config", lambda: config)
            configured(SimpleNamespace(num_actual_tokens=1))
        """,
        frozenset({(ERROR, "get_config().max_tokens")}),
    ),
    Case(
        "a-namespace-a-helper-patch-returns-meets-a-call-every-test-makes-after-the-helper",
        """
        import vllm.mod as mod
        from vllm.mod import configured

        def _patch(monkeypatch):
            config = SimpleNamespace(other=1)
            monkeypatch.setattr(mod, "get_config", lambda: config)

        def _run():
            configured(SimpleNamespace(num_actual_tokens=1))

        def test_x(monkeypatch):
            _patch(monkeypatch)
            _run()

        def test_y(monkeypatch):
            _patch(monkeypatch)
            _run()
        """,
        frozenset({(ERROR, "get_config().max_tokens")}),
    ),
    Case(
        "a-namespace-a-helper-patch-returns-is-not-judged-where-a-test-calls-without-the-patch",
        """
        import vllm.mod as mod
        from vllm.mod import configured

        def _patch(monkeypatch):
            config = SimpleNamespace(other=1)
            monkeypatch.setattr(mod, "get_config", lambda: config)

        def _run():
            configured(SimpleNamespace(num_actual_tokens=1))

        def test_x(monkeypatch):
            _patch(monkeypatch)
            _run()

        def test_y():
            _run()
        """,
        frozenset(),
    ),
    Case(
        "a-namespace-a-with-patch-returns-is-not-what-a-call-after-the-block-gets",
        """
        from unittest.mock import patch

        import vllm.mod as mod
        from vllm.mod import configured

        def test_x():
            config = SimpleNamespace(other=1)
            with patch.object(mod, "get_config", lambda: config):
                pass
            configured(SimpleNamespace(num_actual_tokens=1))
        """,
        frozenset(),
    ),
    Case(
        "a-namespace-a-with-patch-returns-is-what-a-call-in-the-block-gets",
        """
        from unittest.mock import patch

        import vllm.mod as mod
        from vllm.mod import configured

        def test_x():
            config = SimpleNamespace(other=1)
            with patch.object(mod, "get_config", lambda: config):
                configured(SimpleNamespace(num_actual_tokens=1))
        """,
        frozenset({(ERROR, "get_config().max_tokens")}),
    ),
    Case(
        "a-namespace-class-attribute-is-a-field-of-the-instance-made-self",
        """
        def test_x():
            class Holder:
                cfg = SimpleNamespace(a=1)

            h = Holder()
            Builder.gate(h)
        """,
        frozenset({(ERROR, "self.cfg.on")}),
    ),
    Case(
        "a-namespace-class-attribute-a-constructor-may-replace-is-not-followed",
        """
        def test_x():
            class Holder:
                cfg = SimpleNamespace(a=1)

                def __init__(self):
                    self.cfg = SimpleNamespace(on=1)

            h = Holder()
            Builder.gate(h)
        """,
        frozenset(),
    ),
    Case(
        "namespaces-a-helper-returns-in-a-dict-meet-code-a-helper-runs-under-a-patch-returning-it",
        """
        from unittest.mock import patch

        import vllm.mod as mod

        def _layers(names):
            return {name: SimpleNamespace(spec=1) for name in names}

        def _run(names):
            layers = _layers(names)
            with patch.object(mod, "get_layers", return_value=layers):
                return mod.layer_kinds(SimpleNamespace())

        def test_x():
            _run(["a"])
        """,
        frozenset({(ERROR, "get_layers().kind")}),
    ),
    Case(
        "namespaces-a-helper-returns-in-a-dict-do-not-meet-a-call-after-the-patch-ends",
        """
        from unittest.mock import patch

        import vllm.mod as mod

        def _layers(names):
            return {name: SimpleNamespace(spec=1) for name in names}

        def _run(names):
            layers = _layers(names)
            with patch.object(mod, "get_layers", return_value=layers):
                pass
            return mod.layer_kinds(SimpleNamespace())

        def test_x():
            _run(["a"])
        """,
        frozenset(),
    ),
    Case(
        "namespaces-a-comprehension-builds-as-a-field-s-items-are-read-through-an-element",
        """
        import vllm.mod as mod

        def test_x():
            spec = SimpleNamespace(groups=tuple(SimpleNamespace(size=i) for i in range(2)))
            mod.group_windows(spec)
        """,
        frozenset({(NOTE, "spec.groups[].window")}),
    ),
    Case(
        "namespaces-a-comprehension-builds-as-a-field-s-items-holding-the-field-read",
        """
        import vllm.mod as mod

        def test_x():
            spec = SimpleNamespace(groups=[SimpleNamespace(window=i) for i in range(2)])
            mod.group_windows(spec)
        """,
        frozenset(),
    ),
    Case(
        "a-lambda-parameter-of-a-local-s-name-does-not-make-that-namespace-a-field",
        """
        def test_x():
            b = object.__new__(Builder)
            common = SimpleNamespace(query_start_loc_cpu=0)
            metadata = SimpleNamespace(
                prefill=SimpleNamespace(query_start_loc=1), convert=lambda common: common
            )
            b.build(metadata, common)
        """,
        frozenset({(ERROR, "common.num_actual_tokens")}),
    ),
    Case(
        "a-lambda-closing-over-a-local-namespace-keeps-it-a-field-of-the-other",
        """
        def test_x():
            b = object.__new__(Builder)
            common = SimpleNamespace(query_start_loc_cpu=0)
            metadata = SimpleNamespace(
                prefill=SimpleNamespace(query_start_loc=1), convert=lambda: common
            )
            b.build(metadata, common)
        """,
        frozenset(),
    ),
    Case(
        "constructor-reads-past-a-branch-its-class-attributes-decide-and-the-namespace-lacks",
        """
        from vllm.mod import UniformThreshold

        def test_x():
            UniformThreshold(SimpleNamespace(spec=SimpleNamespace(num_tokens=1)))
        """,
        frozenset({(ERROR, "cfg.spec.new_slots")}),
    ),
    Case(
        "constructor-whose-class-attributes-skip-the-branch-reading-what-the-namespace-lacks",
        """
        from vllm.mod import ThresholdBase

        def test_x():
            ThresholdBase(SimpleNamespace(spec=SimpleNamespace(num_tokens=1)))
        """,
        frozenset(),
    ),
    Case(
        "constructor-that-stores-the-field-before-reading-it-is-not-decided-by-the-class-value",
        """
        from vllm.mod import StoredThreshold

        def test_x(limit):
            StoredThreshold(SimpleNamespace(limit=limit, spec=SimpleNamespace(num_tokens=1)))
        """,
        frozenset({(NOTE, "cfg.spec.new_slots")}),
    ),
    Case(
        "constructor-whose-class-attribute-the-test-patches-is-not-decided-by-the-class-value",
        """
        from vllm.mod import UniformThreshold, Support

        def test_x(monkeypatch):
            monkeypatch.setattr(UniformThreshold, "support", Support.SINGLE)
            UniformThreshold(SimpleNamespace(spec=SimpleNamespace(num_tokens=1)))
        """,
        frozenset({(NOTE, "cfg.spec.new_slots")}),
    ),
    Case(
        "a-stated-value-outside-the-code-s-literal-tuple-takes-the-branch-reading-the-lacking-field",
        """
        from vllm.mod import shard_nodes

        def test_x():
            shard_nodes(SimpleNamespace(backend="mp"))
        """,
        frozenset({(ERROR, "parallel.world_size")}),
    ),
    Case(
        "a-stated-value-inside-the-code-s-literal-tuple-skips-the-branch-reading-the-lacking-field",
        """
        from vllm.mod import shard_nodes

        def test_x():
            shard_nodes(SimpleNamespace(backend="ray"))
        """,
        frozenset(),
    ),
    Case(
        "a-constructor-handing-its-star-args-on-unchanged-hands-on-the-test-s-stated-values",
        """
        from vllm.mod import ForwardsAll

        def test_x():
            ForwardsAll(SimpleNamespace(on=True, spec=SimpleNamespace(width=1)))
        """,
        frozenset({(ERROR, "args[0].spec.extra")}),
    ),
    Case(
        "a-constructor-handing-its-star-args-on-unchanged-skips-the-arm-the-stated-values-skip",
        """
        from vllm.mod import ForwardsAll

        def test_x():
            ForwardsAll(SimpleNamespace(on=False, spec=SimpleNamespace(width=1)))
        """,
        frozenset(),
    ),
    Case(
        "a-constructor-that-changes-its-kwargs-before-handing-them-on-leaves-the-arm-undecided",
        """
        from vllm.mod import ForwardsAfterPop

        def test_x():
            ForwardsAfterPop(SimpleNamespace(on=False, spec=SimpleNamespace(width=1)))
        """,
        frozenset({(NOTE, "args[0].spec.extra")}),
    ),
    Case(
        "two-constructions-handing-star-args-on-are-each-walked-with-their-own-stated-values",
        """
        from vllm.mod import ForwardsAll

        def test_off():
            ForwardsAll(SimpleNamespace(on=False, spec=SimpleNamespace(width=1)))

        def test_on():
            ForwardsAll(SimpleNamespace(on=True, spec=SimpleNamespace(width=2)))
        """,
        frozenset({(ERROR, "args[0].spec.extra")}),
    ),
    Case(
        "a-run-s-walk-reads-past-the-shared-walk-s-first-read-of-what-self-lacks",
        """
        from vllm.mod import Finisher

        def _request(params):
            return SimpleNamespace(params=params)

        def test_x():
            ns = SimpleNamespace(other=1)
            Finisher.finish(ns, _request({"decode": True}))
        """,
        frozenset({(SELF, "remote")}),
    ),
    Case(
        "a-run-s-walk-that-leaves-before-any-read-of-what-self-lacks-keeps-the-note",
        """
        from vllm.mod import Finisher

        def _request(params):
            return SimpleNamespace(params=params)

        def test_x():
            ns = SimpleNamespace(other=1)
            Finisher.finish(ns, _request({"other": True}))
        """,
        frozenset({(NOTE, "remote")}),
    ),
    Case(
        "a-result-whose-items-the-test-asserts-rules-out-the-early-empty-return",
        """
        from vllm.mod import warmup_keys

        def test_x():
            keys = warmup_keys(SimpleNamespace(ratios=[32]))
            assert {key[0] for key in keys} == {32}
        """,
        frozenset({(ERROR, "cfg.parallel")}),
    ),
    Case(
        "a-result-the-test-asserts-empty-leaves-the-early-empty-return-open",
        """
        from vllm.mod import warmup_keys

        def test_x():
            keys = warmup_keys(SimpleNamespace(ratios=[1]))
            assert {key[0] for key in keys} == set()
        """,
        frozenset({(NOTE, "cfg.parallel")}),
    ),
    Case(
        "a-test-local-class-s-literal-attribute-decides-the-branch-of-its-instance-made-self",
        """
        from vllm.mod import ExpertLoader

        def test_x():
            class Loader:
                quant = None
                cfg = SimpleNamespace(tp=1)

            loader = Loader()
            ExpertLoader.load(loader)
        """,
        frozenset({(ERROR, "self.cfg.experts")}),
    ),
    Case(
        "a-test-local-class-s-attribute-the-test-sets-on-the-instance-first-decides-nothing",
        """
        from vllm.mod import ExpertLoader

        def test_x():
            class Loader:
                quant = None
                cfg = SimpleNamespace(tp=1)

            loader = Loader()
            loader.quant = make_quant()
            ExpertLoader.load(loader)
        """,
        frozenset({(NOTE, "self.cfg.experts")}),
    ),
    Case(
        "a-helper-s-dict-over-what-one-caller-may-pass-empty-leaves-its-items-read-a-note",
        """
        from unittest.mock import patch

        import vllm.mod as mod

        def _layers(names):
            return {name: SimpleNamespace(spec=1) for name in names}

        def _run(names):
            layers = _layers(names)
            with patch.object(mod, "get_layers", return_value=layers):
                return mod.layer_kinds(SimpleNamespace())

        def test_x():
            _run(["a"])

        def test_y():
            _run([])
        """,
        frozenset({(NOTE, "get_layers().kind")}),
    ),
    Case(
        "a-generator-any-takes-the-first-item-of-reads-it-on-a-container-with-items",
        """
        import vllm.mod as mod

        def test_x(monkeypatch):
            layers = {name: SimpleNamespace(spec=1) for name in ("a", "b")}
            monkeypatch.setattr(mod, "get_layers", lambda *_: layers)
            mod.layer_kinds(SimpleNamespace())
        """,
        frozenset({(ERROR, "get_layers().kind")}),
    ),
    Case(
        "a-generator-s-part-past-its-condition-runs-maybe-never-even-on-items",
        """
        import vllm.mod as mod

        def test_x(monkeypatch):
            layers = {name: SimpleNamespace(on=0) for name in ("a", "b")}
            monkeypatch.setattr(mod, "get_layers", lambda *_: layers)
            mod.layer_kinds_on(SimpleNamespace())
        """,
        frozenset({(NOTE, "get_layers().kind")}),
    ),
    Case(
        "a-helper-s-dict-over-a-parameter-it-changes-first-leaves-its-items-read-a-note",
        """
        from unittest.mock import patch

        import vllm.mod as mod

        def _layers(names):
            names.pop()
            return {name: SimpleNamespace(spec=1) for name in names}

        def _run(names):
            layers = _layers(names)
            with patch.object(mod, "get_layers", return_value=layers):
                return mod.layer_kinds(SimpleNamespace())

        def test_x():
            _run(["a"])
        """,
        frozenset({(NOTE, "get_layers().kind")}),
    ),
    Case(
        "a-namespace-the-test-stores-in-a-tuple-under-a-key-lacks-the-field-read-as-item-0",
        """
        from vllm.mod import Pending

        def test_x():
            s = object.__new__(Pending)
            s.reqs = {}
            s.reqs["r"] = (SimpleNamespace(n=1), [0])
            s.first(SimpleNamespace(ids=["r"]))
        """,
        frozenset({(ERROR, "self.reqs[][0].prompt_len")}),
    ),
    Case(
        "a-namespace-the-test-stores-in-a-tuple-under-a-key-holds-the-field-the-list-beside-it-is-not-it",
        """
        from vllm.mod import Pending

        def test_x():
            s = object.__new__(Pending)
            s.reqs = {}
            s.reqs["r"] = (SimpleNamespace(prompt_len=1), [0])
            s.first(SimpleNamespace(ids=["r"]))
        """,
        frozenset(),
    ),
    Case(
        "a-namespace-stored-in-a-tuple-under-a-key-lacks-the-field-read-unpacking-items",
        """
        from vllm.mod import Pending

        def _add(s, req):
            s.reqs["r"] = (req, [0])

        def test_x():
            s = object.__new__(Pending)
            s.reqs = {}
            _add(s, SimpleNamespace(n=1))
            s.each()
        """,
        frozenset({(ERROR, "self.reqs[][0].prompt_len")}),
    ),
    Case(
        "a-namespace-stored-under-a-key-is-not-judged-after-a-call-that-may-store-its-own",
        """
        from vllm.mod import Pending

        def test_x():
            s = object.__new__(Pending)
            s.reqs = {}
            s.reqs["r"] = (SimpleNamespace(n=1), [0])
            s.add("q", object())
            s.first(SimpleNamespace(ids=["r"]))
        """,
        frozenset(),
    ),
    Case(
        "a-namespace-stored-under-a-key-of-a-container-not-set-empty-is-not-judged",
        """
        from vllm.mod import Pending

        def test_x(reqs):
            s = object.__new__(Pending)
            s.reqs = reqs
            s.reqs["r"] = (SimpleNamespace(n=1), [0])
            s.first(SimpleNamespace(ids=["r"]))
        """,
        frozenset(),
    ),
    Case(
        "a-namespace-stored-under-a-key-of-an-empty-dict-the-test-also-holds-in-a-local-is-not-judged",
        """
        from vllm.mod import Pending

        def test_x():
            s = object.__new__(Pending)
            reqs = {}
            s.reqs = reqs
            s.reqs["r"] = (SimpleNamespace(n=1), [0])
            s.first(SimpleNamespace(ids=["r"]))
        """,
        frozenset(),
    ),
    Case(
        "a-namespace-stored-under-a-key-after-another-load-of-the-container-is-not-judged",
        """
        from vllm.mod import Pending

        def test_x(other):
            s = object.__new__(Pending)
            s.reqs = {}
            s.reqs.update(other)
            s.reqs["r"] = (SimpleNamespace(n=1), [0])
            s.first(SimpleNamespace(ids=["r"]))
        """,
        frozenset(),
    ),
    Case(
        "a-tuple-display-on-a-stub-field-is-read-by-position-the-list-beside-the-namespace-not-it",
        """
        from vllm.mod import Pending

        def test_x():
            s = object.__new__(Pending)
            s.pair = (SimpleNamespace(n=1), [0])
            s.pair_read()
        """,
        frozenset({(ERROR, "self.pair[0].prompt_len")}),
    ),
    Case(
        "a-tuple-display-of-namespaces-on-a-stub-field-each-lacking-the-field-read-through-an-element",
        """
        from vllm.mod import Stacked

        def test_x():
            s = object.__new__(Stacked)
            s.layers = (SimpleNamespace(depth=1), SimpleNamespace(depth=2))
            s.total()
        """,
        frozenset({(ERROR, "self.layers[].width")}),
    ),
    Case(
        "a-tuple-display-on-a-stub-field-whose-namespace-holds-the-field-read-by-position",
        """
        from vllm.mod import Pending

        def test_x():
            s = object.__new__(Pending)
            s.pair = (SimpleNamespace(prompt_len=1), [0])
            s.pair_read()
        """,
        frozenset(),
    ),
    Case(
        "a-class-method-called-through-a-local-bound-once-to-the-class",
        """
        import vllm.mod as m

        def test_x():
            klass = m.Sized
            klass.width(SimpleNamespace(spec=SimpleNamespace(size=1)))
        """,
        frozenset({(ERROR, "cfg.spec.depth")}),
    ),
    Case(
        "a-local-bound-to-one-of-two-classes-leaves-the-call-unresolved",
        """
        from vllm.mod import Other, Sized

        def test_x(flag):
            klass = Sized
            if flag:
                klass = Other
            klass.width(SimpleNamespace(spec=SimpleNamespace(size=1)))
        """,
        frozenset(),
    ),
    Case(
        "a-module-global-the-test-sets-to-a-namespace-lacks-what-a-later-call-reads-of-it",
        """
        import vllm.mod as mod

        def test_x(monkeypatch):
            monkeypatch.setattr(mod, "platform", SimpleNamespace(is_cuda=lambda: True))
            mod.Placed()
        """,
        frozenset({(ERROR, "global platform.current_device")}),
    ),
    Case(
        "a-parameter-named-as-the-global-the-test-set-is-not-the-namespace",
        """
        import vllm.mod as mod

        def test_x(monkeypatch):
            monkeypatch.setattr(
                mod, "platform", SimpleNamespace(is_cuda=lambda: True, current_device=int)
            )
            mod.Placed()
            mod.placed_name(object())
        """,
        frozenset(),
    ),
    Case(
        "a-global-set-in-a-monkeypatch-context-is-restored-before-a-later-call",
        """
        import vllm.mod as mod

        def test_x(monkeypatch):
            with monkeypatch.context() as mp:
                mp.setattr(mod, "platform", SimpleNamespace(is_cuda=lambda: True))
            mod.Placed()
        """,
        frozenset(),
    ),
    Case(
        "a-replaced-base-init-sets-a-namespace-that-lacks-what-the-subclass-reads-of-it",
        """
        import vllm.mod as mod

        def test_x(monkeypatch):
            transform = SimpleNamespace(up=SimpleNamespace(size=1))

            def fake_init(runner):
                runner.transform = transform

            monkeypatch.setattr(mod.BaseRunner, "__init__", fake_init)
            mod.TailRunner()
        """,
        frozenset({(ERROR, "transform@__init__.up.width")}),
    ),
    Case(
        "a-replaced-base-init-sets-a-namespace-that-holds-what-the-subclass-reads-of-it",
        """
        import vllm.mod as mod

        def test_x(monkeypatch):
            transform = SimpleNamespace(up=SimpleNamespace(width=1))

            def fake_init(runner):
                runner.transform = transform

            monkeypatch.setattr(mod.BaseRunner, "__init__", fake_init)
            mod.TailRunner()
        """,
        frozenset(),
    ),
    Case(
        "a-replaced-base-init-that-sets-the-namespace-on-some-calls-only-is-not-followed",
        """
        import vllm.mod as mod

        def test_x(monkeypatch, flag):
            transform = SimpleNamespace(up=SimpleNamespace(size=1))

            def fake_init(runner):
                if flag:
                    runner.transform = transform

            monkeypatch.setattr(mod.BaseRunner, "__init__", fake_init)
            mod.TailRunner()
        """,
        frozenset(),
    ),
    Case(
        "a-call-walked-in-full-that-only-reads-the-namespace-leaves-it-for-a-later-call",
        """
        from vllm.mod import spec_area, spec_size

        def test_x():
            cfg = SimpleNamespace(spec=SimpleNamespace(size=1))
            spec_size(cfg)
            spec_area(cfg)
        """,
        frozenset({(ERROR, "cfg.spec.depth")}),
    ),
    Case(
        "a-call-that-stores-into-the-namespace-may-fill-it-for-a-later-call",
        """
        from vllm.mod import fill_depth, spec_area

        def test_x():
            cfg = SimpleNamespace(spec=SimpleNamespace(size=1))
            fill_depth(cfg)
            spec_area(cfg)
        """,
        frozenset(),
    ),
    Case(
        "a-namespace-a-replaced-function-returns-lacks-what-a-later-call-reads-through-it",
        """
        import vllm.mod as mod
        from vllm.mod import Method

        def test_x(monkeypatch):
            kernel = SimpleNamespace(experts=SimpleNamespace(run=1))
            monkeypatch.setattr(mod, "make_kernel", lambda *_: kernel)
            method = Method(1)
            method.load()
        """,
        frozenset({(ERROR, "make_kernel().experts.keep")}),
    ),
    Case(
        "a-namespace-a-replaced-function-returns-holds-what-a-later-call-reads-through-it",
        """
        import vllm.mod as mod
        from vllm.mod import Method

        def test_x(monkeypatch):
            kernel = SimpleNamespace(experts=SimpleNamespace(run=1, keep=print))
            monkeypatch.setattr(mod, "make_kernel", lambda *_: kernel)
            method = Method(1)
            method.load()
        """,
        frozenset(),
    ),
    Case(
        "a-call-before-the-function-is-replaced-does-not-meet-what-it-returns",
        """
        import vllm.mod as mod
        from vllm.mod import Method

        def test_x(monkeypatch):
            kernel = SimpleNamespace(experts=SimpleNamespace(run=1))
            method = Method(1)
            try:
                method.load()
            except AttributeError:
                pass
            monkeypatch.setattr(mod, "make_kernel", lambda *_: kernel)
        """,
        frozenset(),
    ),
    Case(
        "a-namespace-a-replaced-function-returns-after-an-or-lacks-the-field-on-some-calls",
        """
        import vllm.mod as mod
        from vllm.mod import Method

        def test_x(monkeypatch):
            seen = []
            kernel = SimpleNamespace(experts=SimpleNamespace(run=1))
            monkeypatch.setattr(mod, "make_kernel", lambda cfg: seen.append(cfg) or kernel)
            method = Method(1)
            method.load()
        """,
        frozenset({(NOTE, "make_kernel().experts.keep")}),
    ),
    Case(
        "a-replaced-function-returns-an-object-holding-the-namespace-whose-own-links-are-not-judged",
        """
        import vllm.mod as mod
        from vllm.mod import Method

        class Holder:
            pass

        def test_x(monkeypatch):
            holder = Holder()
            holder.experts = SimpleNamespace(run=1)
            monkeypatch.setattr(mod, "make_kernel", lambda *_: holder)
            method = Method(1)
            method.load()
        """,
        frozenset({(ERROR, "make_kernel().experts.keep")}),
    ),
    Case(
        "a-function-the-callee-binds-itself-is-not-the-replaced-one",
        """
        import vllm.mod as mod
        from vllm.mod import keep_with

        def test_x(monkeypatch):
            kernel = SimpleNamespace(experts=SimpleNamespace(run=1))
            monkeypatch.setattr(mod, "make_kernel", lambda *_: kernel)
            keep_with(lambda: None)
        """,
        frozenset(),
    ),
    Case(
        "a-namespace-a-replaced-function-returns-lacks-what-a-later-call-reads-of-it",
        """
        import vllm.mod as mod
        from vllm.mod import keep_through

        def test_x(monkeypatch):
            kernel = SimpleNamespace(experts=SimpleNamespace(run=1))
            monkeypatch.setattr(mod, "make_kernel", lambda *_: kernel)
            keep_through(None)
        """,
        frozenset({(ERROR, "make_kernel().experts.keep")}),
    ),
    Case(
        "a-tuple-display-on-a-namespace-field-is-read-by-position-the-list-beside-the-namespace-not-it",
        """
        from vllm.mod import pair_of

        def test_x():
            pair_of(SimpleNamespace(pair=(SimpleNamespace(n=1), [0])))
        """,
        frozenset({(ERROR, "x.pair[0].prompt_len")}),
    ),
    Case(
        "a-tuple-display-on-a-namespace-field-whose-namespace-holds-the-field-read-by-position",
        """
        from vllm.mod import pair_of

        def test_x():
            pair_of(SimpleNamespace(pair=(SimpleNamespace(prompt_len=1), [0])))
        """,
        frozenset(),
    ),
    Case(
        "a-field-of-a-namespace-a-helper-returns-stored-under-a-key-lacks-the-field-read-as-item-0",
        """
        from vllm.mod import Pending

        def _out():
            return SimpleNamespace(request=SimpleNamespace(n=1))

        def test_x():
            s = object.__new__(Pending)
            s.reqs = {}
            s.reqs["r"] = (_out().request, [0])
            s.first(SimpleNamespace(ids=["r"]))
        """,
        frozenset({(ERROR, "self.reqs[][0].prompt_len")}),
    ),
    Case(
        "a-field-of-a-returned-namespace-bound-to-a-local-stored-under-a-key-lacks-the-field",
        """
        from vllm.mod import Pending

        def _out():
            return SimpleNamespace(request=SimpleNamespace(n=1))

        def test_x():
            s = object.__new__(Pending)
            s.reqs = {}
            out = _out()
            s.reqs["r"] = (out.request, [0])
            s.first(SimpleNamespace(ids=["r"]))
        """,
        frozenset({(ERROR, "self.reqs[][0].prompt_len")}),
    ),
    Case(
        "a-field-of-a-returned-namespace-stored-under-a-key-holds-the-field-read-as-item-0",
        """
        from vllm.mod import Pending

        def _out():
            return SimpleNamespace(request=SimpleNamespace(prompt_len=1))

        def test_x():
            s = object.__new__(Pending)
            s.reqs = {}
            s.reqs["r"] = (_out().request, [0])
            s.first(SimpleNamespace(ids=["r"]))
        """,
        frozenset(),
    ),
    Case(
        "a-field-of-a-returned-namespace-handed-on-before-it-is-stored-may-hold-another-object",
        """
        from vllm.mod import Pending
        from vllm.other import fill

        def _out():
            return SimpleNamespace(request=SimpleNamespace(n=1))

        def test_x():
            s = object.__new__(Pending)
            s.reqs = {}
            out = _out()
            fill(out)
            s.reqs["r"] = (out.request, [0])
            s.first(SimpleNamespace(ids=["r"]))
        """,
        frozenset(),
    ),
    Case(
        "a-stub-field-set-from-a-helper-parameter-the-call-leaves-at-its-literal-default-decides-a-branch",
        """
        from vllm.mod import RoleGate

        def make(*, role="producer"):
            g = object.__new__(RoleGate)
            g.role = role
            return g

        def test_x():
            g = make()
            g.build(SimpleNamespace(height=1))
        """,
        frozenset({(ERROR, "out.width")}),
    ),
    Case(
        "a-stub-field-set-from-a-helper-parameter-whose-literal-default-takes-the-early-return",
        """
        from vllm.mod import RoleGate

        def make(*, role="consumer"):
            g = object.__new__(RoleGate)
            g.role = role
            return g

        def test_x():
            g = make()
            g.build(SimpleNamespace(height=1))
        """,
        frozenset(),
    ),
    Case(
        "a-stub-field-set-from-a-helper-parameter-the-call-passes-is-not-its-default",
        """
        from vllm.mod import RoleGate

        def make(*, role="consumer"):
            g = object.__new__(RoleGate)
            g.role = role
            return g

        def test_x(role):
            g = make(role=role)
            g.build(SimpleNamespace(height=1))
        """,
        frozenset({(NOTE, "out.width")}),
    ),
    Case(
        "a-stub-field-set-from-a-helper-parameter-the-helper-rebinds-is-not-its-default",
        """
        from vllm.mod import RoleGate

        def make(*, role="consumer"):
            role = role.strip()
            g = object.__new__(RoleGate)
            g.role = role
            return g

        def test_x():
            g = make()
            g.build(SimpleNamespace(height=1))
        """,
        frozenset({(NOTE, "out.width")}),
    ),
    Case(
        "an-empty-dict-on-a-stub-field-the-test-then-stores-into-is-no-longer-surely-empty",
        """
        from vllm.mod import RoleGate

        def test_x():
            g = object.__new__(RoleGate)
            g.trackers = {}
            g.trackers["r"] = object()
            g.tracked(SimpleNamespace(rid="r"))
        """,
        frozenset({(NOTE, "out.width")}),
    ),
    Case(
        "an-empty-dict-on-a-stub-field-the-test-never-loads-again-stays-empty",
        """
        from vllm.mod import RoleGate

        def test_x():
            g = object.__new__(RoleGate)
            g.trackers = {}
            g.tracked(SimpleNamespace(rid="r"))
        """,
        frozenset(),
    ),
    Case(
        "handed-an-early-none-the-test-asserts-not-none-in-an-and-is-not-its-path",
        """
        import vllm.mod as mod
        def test_x(n):
            found = mod.found_fn(SimpleNamespace(size=1), n)
            assert found is not None and found > 1
        """,
        frozenset({(ERROR, "runner.fresh")}),
    ),
    Case(
        "handed-an-early-none-the-test-asserts-none-may-be-its-path",
        """
        import vllm.mod as mod
        def test_x(n):
            assert mod.found_fn(SimpleNamespace(size=1), n) is None
        """,
        frozenset({(NOTE, "runner.fresh")}),
    ),
    Case(
        "a-stub-s-call-the-test-asserts-not-none-rules-out-its-early-none",
        """
        from vllm.mod import Planner
        def test_x(n):
            p = object.__new__(Planner)
            p.runner = SimpleNamespace(size=1)
            step = p.plan(n)
            assert step is not None
        """,
        frozenset({(ERROR, "self.runner.prefix")}),
    ),
    Case(
        "a-stub-s-call-under-pytest-raises-keeps-its-early-none-open",
        """
        import pytest
        from vllm.mod import Planner
        def test_x(n):
            p = object.__new__(Planner)
            p.runner = SimpleNamespace(size=1)
            with pytest.raises(ValueError):
                assert p.plan(n) is not None
        """,
        frozenset({(NOTE, "self.runner.prefix")}),
    ),
    Case(
        "a-list-of-namespaces-with-no-guard-on-it-may-be-empty-for-a-comprehension",
        """
        from vllm.mod import collect_layers

        def test_x():
            layers = []
            for i in range(2):
                layers.append(SimpleNamespace(kv=i))
            collect_layers(layers)
        """,
        frozenset({(NOTE, "layers[].records")}),
    ),
    Case(
        "a-list-past-a-not-empty-guard-that-the-code-then-empties-may-be-empty",
        """
        from vllm.mod import drain_layers

        def test_x():
            layers = []
            for i in range(2):
                layers.append(SimpleNamespace(kv=i))
            drain_layers(layers)
        """,
        frozenset({(NOTE, "layers[].records")}),
    ),
    Case(
        "a-test-class-s-object-holds-the-argument-its-init-stores-plainly",
        """
        from vllm.mod import RoleConnector

        class _FakeTransfer:
            def __init__(self, *, role="both", extra=None):
                self.role = role
                self.extra = extra or {}

        def make_config(role="both", size=1):
            return SimpleNamespace(transfer=_FakeTransfer(role=role), size=size)

        def test_x():
            RoleConnector(make_config())

        def test_y():
            RoleConnector(make_config(size=2))
        """,
        frozenset({(ERROR, "vllm_config.width")}),
    ),
    Case(
        "a-test-class-s-object-whose-field-the-module-stores-again-is-not-known",
        """
        from vllm.mod import RoleConnector

        class _FakeTransfer:
            def __init__(self, *, role="both"):
                self.role = role

        def make_config(role="both", size=1):
            return SimpleNamespace(transfer=_FakeTransfer(role=role), size=size)

        def test_x():
            cfg = make_config()
            cfg.transfer.role = "consumer"
            RoleConnector(cfg)

        def test_y():
            RoleConnector(make_config(size=2))
        """,
        frozenset({(NOTE, "vllm_config.width")}),
    ),
    Case(
        "a-test-class-with-a-base-or-a-store-past-a-return-holds-no-known-field",
        """
        from vllm.mod import RoleConnector

        class _Base:
            pass

        class _Derived(_Base):
            def __init__(self, role="both"):
                self.role = role

        class _Early:
            def __init__(self, role="both", skip=False):
                if skip:
                    return
                self.role = role

        def test_x():
            RoleConnector(SimpleNamespace(transfer=_Derived()))

        def test_y():
            RoleConnector(SimpleNamespace(transfer=_Early()))
        """,
        frozenset({(NOTE, "vllm_config.width")}),
    ),
    Case(
        "a-helper-s-call-is-judged-with-what-the-test-s-call-of-the-helper-passes",
        """
        from vllm.mod import TailReq, tail_puts

        def _resolve(coord, req):
            return tail_puts(coord, req)

        def test_x():
            coord = SimpleNamespace(size=1)
            _resolve(coord, TailReq(tail=True))
        """,
        frozenset({(ERROR, "coord.lookahead")}),
    ),
    Case(
        "a-helper-s-call-does-not-take-a-field-the-helper-stores-on-the-argument",
        """
        from vllm.mod import TailReq, tail_puts

        def _resolve(coord, req, tail):
            req.tail = tail
            return tail_puts(coord, req)

        def test_x(tail):
            coord = SimpleNamespace(size=1)
            _resolve(coord, TailReq(tail=True), tail)
        """,
        frozenset({(NOTE, "coord.lookahead")}),
    ),
    Case(
        "a-helper-s-call-under-the-test-s-pytest-raises-keeps-what-the-helper-states",
        """
        import pytest
        from vllm.mod import TailReq, tail_puts

        def _resolve(coord, req):
            return tail_puts(coord, req)

        def test_x():
            coord = SimpleNamespace(size=1)
            with pytest.raises(ValueError):
                _resolve(coord, TailReq(tail=True))
        """,
        frozenset({(NOTE, "coord.lookahead")}),
    ),
    Case(
        "a-helper-s-call-states-an-object-held-by-an-argument-the-test-built",
        """
        from vllm.mod import TailHolder, TailReq, held_tail_puts

        def _resolve(coord, holder):
            return held_tail_puts(coord, holder)

        def test_x():
            coord = SimpleNamespace(size=1)
            _resolve(coord, TailHolder(req=TailReq(tail=True)))
        """,
        frozenset({(ERROR, "coord.lookahead")}),
    ),
    Case(
        "a-helper-s-call-does-not-take-an-object-the-helper-changes-through-an-argument",
        """
        from vllm.mod import TailHolder, TailReq, held_tail_puts

        def _resolve(coord, holder, tail):
            holder.req.tail = tail
            return held_tail_puts(coord, holder)

        def test_x(tail):
            coord = SimpleNamespace(size=1)
            _resolve(coord, TailHolder(req=TailReq(tail=True)), tail)
        """,
        frozenset({(NOTE, "coord.lookahead")}),
    ),
    Case(
        "a-field-of-a-helper-s-returned-namespace-handed-at-once-lacks-what-the-callee-reads",
        """
        from vllm.mod import spec_size

        def _make():
            return SimpleNamespace(cfg=SimpleNamespace(other=1), rank=0)

        def test_x():
            spec_size(_make().cfg)
        """,
        frozenset({(ERROR, "cfg.spec")}),
    ),
    Case(
        "a-field-of-a-helper-s-returned-namespace-handed-at-once-holds-what-the-callee-reads",
        """
        from vllm.mod import spec_size

        def _make():
            return SimpleNamespace(cfg=SimpleNamespace(spec=SimpleNamespace(size=1)), rank=0)

        def test_x():
            spec_size(_make().cfg)
        """,
        frozenset(),
    ),
    Case(
        "a-namespace-a-mock-bound-to-a-local-returns-once-patched-in-lacks-what-a-later-call-reads",
        """
        from unittest.mock import Mock
        import vllm.mod as mod
        from vllm.mod import Method

        def test_x(monkeypatch):
            kernel = SimpleNamespace(experts=SimpleNamespace(run=1))
            make = Mock(return_value=kernel)
            monkeypatch.setattr(mod, "make_kernel", make)
            method = Method(1)
            method.load()
            make.assert_called_once()
        """,
        frozenset({(ERROR, "make_kernel().experts.keep")}),
    ),
    Case(
        "a-namespace-a-mock-patched-in-returns-lacks-what-a-later-call-reads",
        """
        from unittest.mock import Mock
        import vllm.mod as mod
        from vllm.mod import Method

        def test_x(monkeypatch):
            kernel = SimpleNamespace(experts=SimpleNamespace(run=1))
            monkeypatch.setattr(mod, "make_kernel", Mock(return_value=kernel))
            method = Method(1)
            method.load()
        """,
        frozenset({(ERROR, "make_kernel().experts.keep")}),
    ),
    Case(
        "a-mock-whose-return-value-the-test-then-replaces-no-longer-returns-the-namespace",
        """
        from unittest.mock import Mock
        import vllm.mod as mod
        from vllm.mod import Method

        def test_x(monkeypatch):
            kernel = SimpleNamespace(experts=SimpleNamespace(run=1))
            make = Mock(return_value=kernel)
            make.return_value = object()
            monkeypatch.setattr(mod, "make_kernel", make)
            method = Method(1)
            method.load()
        """,
        frozenset(),
    ),
    Case(
        "a-mock-with-a-side-effect-returns-what-the-side-effect-gives-not-the-namespace",
        """
        from unittest.mock import Mock
        import vllm.mod as mod
        from vllm.mod import Method

        def test_x(monkeypatch):
            kernel = SimpleNamespace(experts=SimpleNamespace(run=1))
            make = Mock(return_value=kernel, side_effect=lambda *_: None)
            monkeypatch.setattr(mod, "make_kernel", make)
            method = Method(1)
            method.load()
        """,
        frozenset(),
    ),
    Case(
        "a-method-the-test-monkeypatches-on-the-object-to-return-a-bare-object-decides-its-not-none-branch",
        """
        import vllm.mod as mod
        from vllm.mod import QuantGate

        def test_x(monkeypatch):
            kernel = SimpleNamespace(experts=SimpleNamespace(run=1))
            monkeypatch.setattr(mod, "make_kernel", lambda *_: kernel)
            gate = QuantGate()
            monkeypatch.setattr(gate, "get_quant", lambda: object())
            gate.load()
        """,
        frozenset({(ERROR, "make_kernel().experts.keep")}),
    ),
    Case(
        "a-method-the-test-monkeypatches-on-the-object-to-return-none-skips-its-not-none-branch",
        """
        import vllm.mod as mod
        from vllm.mod import QuantGate

        def test_x(monkeypatch):
            kernel = SimpleNamespace(experts=SimpleNamespace(run=1))
            monkeypatch.setattr(mod, "make_kernel", lambda *_: kernel)
            gate = QuantGate()
            monkeypatch.setattr(gate, "get_quant", lambda: None)
            gate.load()
        """,
        frozenset(),
    ),
    Case(
        "a-method-the-test-monkeypatches-on-the-object-only-under-a-branch-leaves-the-branch-open",
        """
        import vllm.mod as mod
        from vllm.mod import QuantGate

        def test_x(monkeypatch, flag):
            kernel = SimpleNamespace(experts=SimpleNamespace(run=1))
            monkeypatch.setattr(mod, "make_kernel", lambda *_: kernel)
            gate = QuantGate()
            if flag:
                monkeypatch.setattr(gate, "get_quant", lambda: object())
            gate.load()
        """,
        frozenset({(NOTE, "make_kernel().experts.keep")}),
    ),
    Case(
        "a-method-the-test-monkeypatches-on-the-object-twice-leaves-the-branch-open",
        """
        import vllm.mod as mod
        from vllm.mod import QuantGate

        def test_x(monkeypatch):
            kernel = SimpleNamespace(experts=SimpleNamespace(run=1))
            monkeypatch.setattr(mod, "make_kernel", lambda *_: kernel)
            gate = QuantGate()
            monkeypatch.setattr(gate, "get_quant", lambda: object())
            monkeypatch.setattr(gate, "get_quant", lambda: None)
            gate.load()
        """,
        frozenset({(NOTE, "make_kernel().experts.keep")}),
    ),
    Case(
        "the-first-call-on-a-fresh-object-sees-the-literal-its-constructor-chain-stored",
        """
        import vllm.mod as mod
        from vllm.mod import FreshMethod

        def test_x(monkeypatch):
            kernel = SimpleNamespace(experts=SimpleNamespace(run=1))
            monkeypatch.setattr(mod, "make_kernel", lambda *_: kernel)
            method = FreshMethod(1)
            method.setup()
        """,
        frozenset({(ERROR, "make_kernel().experts.keep")}),
    ),
    Case(
        "the-first-call-in-a-loop-on-a-fresh-object-sees-the-literal-its-constructor-stored",
        """
        import vllm.mod as mod
        from vllm.mod import FreshMethod

        def test_x(monkeypatch):
            kernel = SimpleNamespace(experts=SimpleNamespace(run=1))
            monkeypatch.setattr(mod, "make_kernel", lambda *_: kernel)
            method = FreshMethod(1)
            for _ in range(2):
                method.setup()
        """,
        frozenset({(ERROR, "make_kernel().experts.keep")}),
    ),
    Case(
        "a-call-after-the-test-used-the-object-does-not-know-what-its-constructor-stored",
        """
        import vllm.mod as mod
        from vllm.mod import FreshMethod

        def test_x(monkeypatch):
            kernel = SimpleNamespace(experts=SimpleNamespace(run=1))
            monkeypatch.setattr(mod, "make_kernel", lambda *_: kernel)
            method = FreshMethod(1)
            assert method.cfg == 1
            method.setup()
        """,
        frozenset({(NOTE, "make_kernel().experts.keep")}),
    ),
    Case(
        "a-constructor-that-calls-a-method-of-its-object-leaves-its-fields-unknown",
        """
        import vllm.mod as mod
        from vllm.mod import FreshReset

        def test_x(monkeypatch):
            kernel = SimpleNamespace(experts=SimpleNamespace(run=1))
            monkeypatch.setattr(mod, "make_kernel", lambda *_: kernel)
            method = FreshReset(1)
            method.setup()
        """,
        frozenset({(NOTE, "make_kernel().experts.keep")}),
    ),
    Case(
        "a-module-a-helper-reloads-names-the-functions-called-on-it",
        """
        import importlib

        def _reload():
            module = importlib.import_module("vllm.mod")
            return importlib.reload(module)

        def test_x():
            mod = _reload()
            mod.build_common(SimpleNamespace(other=1))
        """,
        frozenset({(ERROR, "common.num_actual_tokens"), (STALE, "other")}),
    ),
    Case(
        "a-patch-through-a-reloaded-module-replaces-what-its-functions-call",
        """
        import importlib

        def test_x(monkeypatch):
            mod = importlib.reload(importlib.import_module("vllm.mod"))
            monkeypatch.setattr(mod, "build_common", lambda common: 0)
            mod.pass_on(None, SimpleNamespace(common=SimpleNamespace(other=1)))
        """,
        frozenset(),
    ),
    Case(
        "a-module-imported-by-a-computed-name-is-not-followed",
        """
        import importlib

        def test_x(name):
            mod = importlib.import_module(name)
            mod.build_common(SimpleNamespace(other=1))
        """,
        frozenset(),
    ),
    Case(
        "a-field-the-test-asserts-after-the-call-rules-out-a-bare-return-before-its-store",
        """
        from vllm.mod import ReadySync

        def test_x(payload):
            s = object.__new__(ReadySync)
            s.cfg = SimpleNamespace(cache=SimpleNamespace(seen=False))
            s.apply(payload)
            assert s.cfg.cache.size == 3
        """,
        frozenset({(ERROR, "self.cfg.parallel")}),
    ),
    Case(
        "a-field-the-call-stores-before-a-bare-return-rules-nothing-out",
        """
        from vllm.mod import ReadySync

        def test_x(payload):
            s = object.__new__(ReadySync)
            s.cfg = SimpleNamespace(cache=SimpleNamespace(size=0))
            s.apply(payload)
            assert s.cfg.cache.seen
        """,
        frozenset({(NOTE, "self.cfg.parallel")}),
    ),
    Case(
        "a-field-the-test-gives-some-object-itself-rules-nothing-out",
        """
        from vllm.mod import ReadySync

        def test_x(payload):
            s = object.__new__(ReadySync)
            s.cfg = SimpleNamespace(cache=SimpleNamespace(seen=False))
            s.apply(payload)
            assert s.cfg.cache.size == 3

        def test_y():
            other = SimpleNamespace()
            other.size = 3
        """,
        frozenset({(NOTE, "self.cfg.parallel")}),
    ),
    Case(
        "a-loop-over-literal-names-patches-each-name-it-lists",
        """
        import vllm.mod as mod

        def test_x(monkeypatch):
            for name in ("schedule", "serve"):
                monkeypatch.setattr(mod, name, lambda *a: None)
            mod.build_common(SimpleNamespace(other=1))
        """,
        frozenset({(ERROR, "common.num_actual_tokens"), (STALE, "other")}),
    ),
    Case(
        "a-loop-over-literal-names-replaces-what-the-callee-calls",
        """
        import vllm.mod as mod

        def test_x(monkeypatch):
            for name in ("build_common",):
                monkeypatch.setattr(mod, name, lambda c: 0)
            mod.pass_on(None, SimpleNamespace(common=SimpleNamespace(other=1)))
        """,
        frozenset(),
    ),
    Case(
        "a-loop-over-names-the-test-computes-patches-what-it-may",
        """
        import vllm.mod as mod

        def test_x(monkeypatch, names):
            for name in names:
                monkeypatch.setattr(mod, name, lambda *a: None)
            mod.build_common(SimpleNamespace(other=1))
        """,
        frozenset({(NOTE, "common.num_actual_tokens")}),
    ),
    Case(
        "what-follows-a-try-whose-body-always-returns-runs-only-past-a-handler",
        """
        from vllm.mod import FallbackLoader

        def test_x():
            FallbackLoader(True).load(SimpleNamespace(name="m"))
        """,
        frozenset({(NOTE, "cfg.disk")}),
    ),
    Case(
        "what-follows-a-try-whose-body-goes-on-runs-on-its-straight-line",
        """
        from vllm.mod import FallbackLoader

        def test_x():
            FallbackLoader(True).load_or_note(SimpleNamespace(name="m"))
        """,
        frozenset({(ERROR, "cfg.disk")}),
    ),
    Case(
        "an-asserted-field-of-the-returned-dataclass-decides-the-local-it-was-handed",
        """
        from vllm.mod import PersistencePlanner

        def test_x(ready):
            plan = PersistencePlanner.plan(SimpleNamespace(), ready)
            assert plan.persistent
        """,
        frozenset({(SELF, "width")}),
    ),
    Case(
        "an-asserted-false-field-of-the-returned-dataclass-rules-the-read-out",
        """
        from vllm.mod import PersistencePlanner

        def test_x(ready):
            plan = PersistencePlanner.plan(SimpleNamespace(), ready)
            assert not plan.persistent
        """,
        frozenset(),
    ),
    Case(
        "an-unasserted-field-of-the-returned-dataclass-leaves-the-read-possible",
        """
        from vllm.mod import PersistencePlanner

        def test_x(ready):
            plan = PersistencePlanner.plan(SimpleNamespace(), ready)
            assert plan is not None
        """,
        frozenset({(NOTE, "width")}),
    ),
    Case(
        "an-asserted-field-a-post-init-may-change-decides-nothing",
        """
        from vllm.mod import PersistencePlanner

        def test_x(ready):
            plan = PersistencePlanner.hooked(SimpleNamespace(), ready)
            assert plan.persistent
        """,
        frozenset({(NOTE, "width")}),
    ),
    Case(
        "an-arm-whose-assertion-the-test-values-make-false-is-not-the-path",
        """
        from vllm.mod import Routed

        def test_x(route):
            r = object.__new__(Routed)
            r.forward(SimpleNamespace(verify=None), route)
        """,
        frozenset({(ERROR, "md.heads")}),
    ),
    Case(
        "an-arm-whose-assertion-the-test-values-may-pass-stays-possible",
        """
        from vllm.mod import Routed

        def test_x(route):
            r = object.__new__(Routed)
            r.forward(SimpleNamespace(verify=SimpleNamespace(rows=1)), route)
        """,
        frozenset({(NOTE, "md.heads")}),
    ),
    Case(
        "an-arm-whose-assertion-fails-may-be-what-pytest-raises-expects",
        """
        import pytest
        from vllm.mod import Routed

        def test_x(route):
            r = object.__new__(Routed)
            with pytest.raises(AssertionError):
                r.forward(SimpleNamespace(verify=None), route)
        """,
        frozenset({(NOTE, "md.heads")}),
    ),
    Case(
        "a-parametrize-case-s-asserted-result-decides-its-run-s-path",
        """
        import pytest
        from vllm.mod import CaseBoundPlanner

        @pytest.mark.parametrize("wide,expected", [(False, None), (True, 5)])
        def test_x(wide, expected):
            cfg = SimpleNamespace(spec=SimpleNamespace(n=4))
            bound = CaseBoundPlanner.case_bound(cfg, wide)
            assert bound == expected
        """,
        frozenset({(ERROR, "cfg.spec.width_slots")}),
    ),
    Case(
        "a-variant-s-cases-each-asserting-its-result-decide-their-runs",
        """
        import pytest
        from vllm.mod import CaseBoundPlanner

        @pytest.mark.parametrize(
            "n,wide,expected", [(None, True, None), (4, False, None), (4, True, 5)]
        )
        def test_x(n, wide, expected):
            cfg = SimpleNamespace(spec=SimpleNamespace(n=4) if n is not None else None)
            bound = CaseBoundPlanner.case_bound(cfg, wide)
            assert bound == expected
        """,
        frozenset({(ERROR, "cfg.spec.width_slots")}),
    ),
    Case(
        "parametrize-cases-asserting-no-result-leave-the-read-a-note",
        """
        import pytest
        from vllm.mod import CaseBoundPlanner

        @pytest.mark.parametrize("wide,expected", [(False, None), (True, None)])
        def test_x(wide, expected):
            cfg = SimpleNamespace(spec=SimpleNamespace(n=4))
            bound = CaseBoundPlanner.case_bound(cfg, wide)
            assert bound == expected
        """,
        frozenset({(NOTE, "cfg.spec.width_slots")}),
    ),
    Case(
        "a-case-s-asserted-result-under-pytest-raises-decides-nothing",
        """
        import pytest
        from vllm.mod import CaseBoundPlanner

        @pytest.mark.parametrize("wide,expected", [(False, None), (True, 5)])
        def test_x(wide, expected):
            cfg = SimpleNamespace(spec=SimpleNamespace(n=4))
            with pytest.raises(AttributeError):
                assert CaseBoundPlanner.case_bound(cfg, wide) == expected
        """,
        frozenset({(NOTE, "cfg.spec.width_slots")}),
    ),
    Case(
        # Two variants (n=1, n=2) of one creation meet one call, each built on two cases:
        # which one a case's run hands the call is not told apart, so no case decides.
        "variants-built-on-several-cases-each-at-one-call-leave-the-read-a-note",
        """
        import pytest
        from vllm.mod import CaseBoundPlanner

        @pytest.mark.parametrize(
            "n,wide,expected", [(1, True, 5), (1, False, None), (2, True, 5), (2, False, None)]
        )
        def test_x(n, wide, expected):
            cfg = SimpleNamespace(spec=SimpleNamespace(n=n))
            bound = CaseBoundPlanner.case_bound(cfg, wide)
            assert bound == expected
        """,
        frozenset({(NOTE, "cfg.spec.width_slots")}),
    ),
    Case(
        "a-property-of-a-stub-held-in-a-namespace-reads-the-stub-s-namespace",
        """
        from vllm.mod import HeldExperts, held_mode

        def test_x():
            fused = object.__new__(HeldExperts)
            fused.moe_config = SimpleNamespace(other=False)
            held_mode(SimpleNamespace(fused=fused))
        """,
        frozenset({(ERROR, "experts.fused.moe_config.mori")}),
    ),
    Case(
        "a-property-of-a-stub-held-in-a-namespace-finds-what-the-test-set",
        """
        from vllm.mod import HeldExperts, held_mode

        def test_x():
            fused = object.__new__(HeldExperts)
            fused.moe_config = SimpleNamespace(mori=False)
            held_mode(SimpleNamespace(fused=fused))
        """,
        frozenset(),
    ),
    Case(
        "a-method-of-a-stub-on-a-namespace-made-self-reads-an-item-of-its-list",
        """
        from vllm.mod import HeldExperts, HeldImpl

        def test_x():
            group = object.__new__(HeldExperts)
            group.caches = [SimpleNamespace(runtime=SimpleNamespace(hot=1))]
            impl = SimpleNamespace(group=group, index=0)
            HeldImpl.decode_rows(impl, SimpleNamespace(n=1))
        """,
        frozenset({(ERROR, "self.group.caches[].runtime.rows")}),
    ),
    Case(
        "a-method-the-test-replaced-on-a-stub-held-in-a-namespace-is-not-walked",
        """
        from unittest.mock import MagicMock
        from vllm.mod import HeldExperts, HeldImpl

        def test_x(monkeypatch):
            group = object.__new__(HeldExperts)
            group.caches = [SimpleNamespace(runtime=SimpleNamespace(hot=1))]
            monkeypatch.setattr(group, "convert_rows", MagicMock(return_value=0))
            impl = SimpleNamespace(group=group, index=0)
            HeldImpl.decode_rows(impl, SimpleNamespace(n=1))
        """,
        frozenset(),
    ),
    Case(
        "a-namespace-a-context-manager-makes-current-lacks-what-an-off-path-read-takes-a-note",
        """
        from vllm.mod import fetch_if, holding_current

        def test_x(flag):
            runner = SimpleNamespace()
            with holding_current(runner):
                fetch_if(runner, flag)
        """,
        frozenset({(NOTE, "runner.size")}),
    ),
    Case(
        "a-namespace-earlier-code-stores-the-field-on-holds-it-off-the-path-too",
        """
        from vllm.mod import fetch_if, fill_size

        def test_x(flag):
            runner = SimpleNamespace()
            fill_size(runner)
            fetch_if(runner, flag)
        """,
        frozenset(),
    ),
    Case(
        "a-namespace-earlier-code-sets-a-computed-name-on-stays-silent-off-the-path",
        """
        from vllm.mod import fetch_if, set_flag_named

        def test_x(flag):
            runner = SimpleNamespace()
            set_flag_named(runner, "size")
            fetch_if(runner, flag)
        """,
        frozenset(),
    ),
    Case(
        "an-asserted-true-field-of-an-item-of-the-returned-list-keeps-the-filtered-list-filled",
        """
        from vllm.mod import KeptScheduler

        def test_x():
            s = object.__new__(KeptScheduler)
            s.saving = True
            meta = s.build_meta(SimpleNamespace(names=["a"]))
            req = meta.requests[0]
            assert req.can_save is True
        """,
        frozenset({(ERROR, "out.table")}),
    ),
    Case(
        "an-asserted-item-field-later-code-may-set-decides-nothing",
        """
        from vllm.mod import KeptScheduler

        def test_x():
            s = object.__new__(KeptScheduler)
            meta = s.build_then_flip(SimpleNamespace(names=["a"]))
            assert meta.requests[0].can_save
        """,
        frozenset({(NOTE, "out.table")}),
    ),
    Case(
        "an-item-field-asserted-false-leaves-the-filtered-list-undecided",
        """
        from vllm.mod import KeptScheduler

        def test_x():
            s = object.__new__(KeptScheduler)
            s.saving = False
            meta = s.build_meta(SimpleNamespace(names=["a"]))
            assert meta.requests[0].can_save is False
        """,
        frozenset({(NOTE, "out.table")}),
    ),
    Case(
        "a-mock-on-a-stub-the-test-asserts-was-called-decides-the-one-arm-that-calls-it",
        """
        from unittest.mock import MagicMock
        from vllm.mod import MockRouted

        def test_x(n):
            group = object.__new__(MockRouted)
            group.caches = [SimpleNamespace(runtime=SimpleNamespace(limit=1))]
            group._convert_mocked = MagicMock(return_value=0)
            group.convert_rows(n, SimpleNamespace(narrow=1))
            assert group._convert_mocked.call_args.kwargs == {}
        """,
        frozenset({(ERROR, "md.wide")}),
    ),
    Case(
        "a-mock-asserted-called-once-decides-the-arm-too",
        """
        from unittest.mock import MagicMock
        from vllm.mod import MockRouted

        def test_x(n):
            group = object.__new__(MockRouted)
            group.caches = [SimpleNamespace(runtime=SimpleNamespace(limit=1))]
            group._convert_mocked = MagicMock(return_value=0)
            group.convert_rows(n, SimpleNamespace(narrow=1))
            group._convert_mocked.assert_called_once()
        """,
        frozenset({(ERROR, "md.wide")}),
    ),
    Case(
        "a-mock-the-test-may-leave-uncalled-decides-nothing",
        """
        from unittest.mock import MagicMock
        from vllm.mod import MockRouted

        def test_x(n):
            group = object.__new__(MockRouted)
            group.caches = [SimpleNamespace(runtime=SimpleNamespace(limit=1))]
            group._convert_mocked = MagicMock(return_value=0)
            group.convert_rows(n, SimpleNamespace(narrow=1))
            assert group._convert_mocked.call_args is None
        """,
        frozenset({(NOTE, "md.wide"), (NOTE, "self.caches[].swap")}),
    ),
    Case(
        "a-mock-another-path-also-reaches-through-a-method-decides-nothing",
        """
        from unittest.mock import MagicMock
        from vllm.mod import MockRouted

        def test_x(n):
            group = object.__new__(MockRouted)
            group.caches = [SimpleNamespace(runtime=SimpleNamespace(limit=1))]
            group._convert_mocked = MagicMock(return_value=0)
            group.convert_or_relay(n, SimpleNamespace(narrow=1))
            group._convert_mocked.assert_called_once()
        """,
        frozenset({(NOTE, "md.wide")}),
    ),
    Case(
        "an-empty-container-the-test-writes-on-a-namespace-made-self-holds-nothing",
        """
        from vllm.mod import RecvSettler

        def test_x(request):
            RecvSettler.settle_recv(SimpleNamespace(failed_rids=set()), request)
        """,
        frozenset({(SELF, "window_tokens")}),
    ),
    Case(
        "an-empty-container-the-code-fills-first-decides-no-membership",
        """
        from vllm.mod import RecvSettler

        def test_x(request):
            RecvSettler.settle_marked(SimpleNamespace(failed_rids=[]), request)
        """,
        frozenset({(NOTE, "window_tokens"), (NOTE, "retry_budget")}),
    ),
    Case(
        "an-empty-container-someone-may-fill-first-decides-no-membership",
        """
        from vllm.mod import RecvSettler

        def test_x(request):
            ns = SimpleNamespace(failed_rids=set())
            ns.failed_rids.add(request.rid)
            RecvSettler.settle_recv(ns, request)
        """,
        frozenset({(NOTE, "window_tokens"), (NOTE, "retry_budget")}),
    ),
    Case(
        "an-empty-container-the-loop-fills-decides-no-membership-in-it",
        """
        from vllm.mod import RecvSettler

        def test_x():
            RecvSettler.settle_each(
                SimpleNamespace(failed_rids=set()),
                [SimpleNamespace(rid=1), SimpleNamespace(rid=1)],
            )
        """,
        frozenset({(NOTE, "window_tokens"), (NOTE, "retry_budget")}),
    ),
    Case(
        "a-module-a-platform-conditional-names-is-walked-as-one-of-its-candidates",
        """
        import importlib

        def test_x(rocm):
            backend = "mod" if rocm else "pkg.plat.impl"
            mod = importlib.import_module(f"vllm.{backend}")
            mod.build_common(SimpleNamespace(other=1))
        """,
        frozenset({(NOTE, "common.num_actual_tokens")}),
    ),
    Case(
        "a-patch-through-a-module-of-several-candidates-replaces-it-in-each",
        """
        import importlib

        def test_x(monkeypatch, rocm):
            backend = "mod" if rocm else "pkg.plat.impl"
            mod = importlib.import_module(f"vllm.{backend}")
            monkeypatch.setattr(mod, "build_common", lambda common: 0)
            mod.pass_on(None, SimpleNamespace(common=SimpleNamespace(other=1)))
        """,
        frozenset(),
    ),
    Case(
        "a-module-a-fixture-returns-in-a-tuple-names-the-functions-called-on-it",
        """
        import importlib
        import pytest

        @pytest.fixture
        def loaded_pair():
            root = "vllm"
            return importlib.import_module(f"{root}.pkg"), importlib.import_module(f"{root}.mod")

        def test_x(loaded_pair):
            _, mod = loaded_pair
            mod.build_common(SimpleNamespace(other=1))
        """,
        frozenset({(ERROR, "common.num_actual_tokens"), (STALE, "other")}),
    ),
    Case(
        "a-fixture-tuple-the-test-parametrizes-itself-names-no-module",
        """
        import importlib
        import pytest

        @pytest.fixture
        def loaded_pair():
            return importlib.import_module("vllm.pkg"), importlib.import_module("vllm.mod")

        @pytest.mark.parametrize("loaded_pair", [(None, None)])
        def test_x(loaded_pair):
            _, mod = loaded_pair
            mod.build_common(SimpleNamespace(other=1))
        """,
        frozenset(),
    ),
    Case(
        "a-factory-handed-to-a-replacement-that-calls-it-runs",
        """
        import vllm.mod as mod

        def test_x(monkeypatch):
            monkeypatch.setattr(mod, "build_tower", lambda n, factory, prefix: [factory(prefix)])
            mod.Tower(cfg=SimpleNamespace(depth=2))
        """,
        frozenset({(NOTE, "cfg.layer_width")}),
    ),
    Case(
        "a-factory-handed-to-a-replacement-ignoring-its-arguments-never-runs",
        """
        import vllm.mod as mod

        def test_x(monkeypatch):
            monkeypatch.setattr(mod, "build_tower", lambda *_, **kw: [])
            mod.Tower(cfg=SimpleNamespace(depth=2))
        """,
        frozenset(),
    ),
    Case(
        "a-factory-handed-to-a-test-function-that-never-reads-that-parameter-never-runs",
        """
        import vllm.mod as mod

        def test_x(monkeypatch):
            def fake_tower(n, factory, prefix):
                return [n]

            monkeypatch.setattr(mod, "build_tower", fake_tower)
            mod.Tower(cfg=SimpleNamespace(depth=2))
        """,
        frozenset(),
    ),
    Case(
        "a-factory-handed-to-a-plain-mock-never-runs",
        """
        from unittest.mock import MagicMock
        import vllm.mod as mod

        def test_x(monkeypatch):
            monkeypatch.setattr(mod, "build_tower", MagicMock(return_value=[]))
            mod.Tower(cfg=SimpleNamespace(depth=2))
        """,
        frozenset(),
    ),
    Case(
        "a-factory-handed-to-a-mock-whose-side-effect-may-call-it-runs",
        """
        from unittest.mock import MagicMock
        import vllm.mod as mod

        def test_x(monkeypatch):
            monkeypatch.setattr(
                mod, "build_tower", MagicMock(side_effect=lambda n, f, prefix: [f(prefix)])
            )
            mod.Tower(cfg=SimpleNamespace(depth=2))
        """,
        frozenset({(NOTE, "cfg.layer_width")}),
    ),
    Case(
        "a-fixture-the-test-requests-may-change-the-namespace-before-the-call",
        """
        import pytest
        import vllm.mod as mod

        @pytest.fixture
        def mono_cfg():
            return SimpleNamespace(kernel=SimpleNamespace(mono=False))

        @pytest.fixture
        def flipped(mono_cfg):
            mod.mono_flip(mono_cfg)
            return mono_cfg

        def test_x(mono_cfg, flipped):
            mod.MonoTop(vllm_config=mono_cfg)
        """,
        frozenset({(NOTE, "vllm_config.refusals")}),
    ),
    Case(
        "a-fixture-the-test-never-requests-never-runs-before-its-call",
        """
        import pytest
        import vllm.mod as mod

        @pytest.fixture
        def mono_cfg():
            return SimpleNamespace(kernel=SimpleNamespace(mono=False))

        @pytest.fixture
        def flipped(mono_cfg):
            mod.mono_flip(mono_cfg)
            return mono_cfg

        def test_x(mono_cfg):
            mod.MonoTop(vllm_config=mono_cfg)

        def test_y(flipped):
            assert flipped
        """,
        frozenset(),
    ),
    Case(
        "a-call-through-a-module-of-several-candidates-is-judged-in-each",
        """
        import importlib

        def test_x(rocm):
            backend = "mod" if rocm else "pkg.plat.impl"
            mod = importlib.import_module(f"vllm.{backend}")
            mod.Outer(SimpleNamespace(y=1))
        """,
        frozenset({(NOTE, "cfg.x")}),
    ),
    Case(
        "a-call-through-a-module-of-several-candidates-each-reading-what-it-holds",
        """
        import importlib

        def test_x(rocm):
            backend = "mod" if rocm else "pkg.plat.impl"
            mod = importlib.import_module(f"vllm.{backend}")
            mod.Outer(SimpleNamespace(x=1))
        """,
        frozenset(),
    ),
    Case(
        "a-helper-stores-each-tests-namespace-on-its-stub-and-each-test-reads-its-own",
        """
        from vllm.mod import PerTestHeld

        def _held(ns):
            stub = object.__new__(PerTestHeld)
            stub.held = ns
            return stub

        def test_x():
            _held(SimpleNamespace(right=1)).read_left()

        def test_y():
            _held(SimpleNamespace(left=1, right=1)).read_right()
        """,
        frozenset({(ERROR, "self.held.left")}),
    ),
    Case(
        "a-helper-stores-each-tests-namespace-on-its-stub-another-tests-lacks-nothing",
        """
        from vllm.mod import PerTestHeld

        def _held(ns):
            stub = object.__new__(PerTestHeld)
            stub.held = ns
            return stub

        def test_x():
            _held(SimpleNamespace(left=1)).read_left()

        def test_y():
            _held(SimpleNamespace(right=1)).read_right()
        """,
        frozenset(),
    ),
    Case(
        "a-helper-stores-a-tests-namespace-whose-stated-gate-opens-the-read",
        """
        from vllm.mod import PerTestHeld

        def _held(ns):
            stub = object.__new__(PerTestHeld)
            stub.held = ns
            return stub

        def test_x():
            _held(SimpleNamespace(gate=True)).read_gated()
        """,
        frozenset({(ERROR, "self.held.left")}),
    ),
    Case(
        "a-helper-stores-a-tests-namespace-whose-stated-gate-closes-the-read",
        """
        from vllm.mod import PerTestHeld

        def _held(ns):
            stub = object.__new__(PerTestHeld)
            stub.held = ns
            return stub

        def test_x():
            _held(SimpleNamespace(gate=False)).read_gated()
        """,
        frozenset(),
    ),
    Case(
        "a-constructor-chain-of-one-object-is-one-hop-of-the-function-depth",
        """
        import vllm.mod as mod

        def test_x():
            mod.HopLeaf(SimpleNamespace(hop_kind=1))
        """,
        frozenset({(ERROR, "cfg.hop_mode")}),
    ),
    Case(
        "a-constructor-chain-of-one-object-reaching-a-field-the-namespace-holds",
        """
        import vllm.mod as mod

        def test_x():
            mod.HopLeaf(SimpleNamespace(hop_kind=1, hop_mode=2))
        """,
        frozenset(),
    ),
    Case(
        "a-keyword-landing-in-kwargs-is-its-item-with-the-stated-value",
        """
        import vllm.mod as mod

        def test_x():
            mod.KwRunner.run(cfg=SimpleNamespace(kw_par=SimpleNamespace(size=2)))
        """,
        frozenset({(ERROR, "kwargs['cfg'].kw_deep")}),
    ),
    Case(
        "a-keyword-landing-in-kwargs-decides-the-branch-away-from-the-read",
        """
        import vllm.mod as mod

        def test_x():
            mod.KwRunner.run(cfg=SimpleNamespace(kw_par=SimpleNamespace(size=1)))
        """,
        frozenset(),
    ),
    Case(
        "a-replacement-that-may-raise-under-pytest-raises-leaves-the-path-open",
        """
        import pytest
        import vllm.mod as mod

        def _boom(*args, **kwargs):
            raise SystemExit(1)

        def test_x(monkeypatch):
            for name in ("rr_setup",):
                monkeypatch.setattr(mod, name, _boom)
            with pytest.raises(SystemExit):
                mod.RaiseRunner.run(SimpleNamespace(rr_par=SimpleNamespace(size=1)))
        """,
        frozenset({(NOTE, "cfg.rr_deep")}),
    ),
    Case(
        "a-replacement-that-only-gives-a-literal-never-raises-what-pytest-raises-expects",
        """
        import pytest
        import vllm.mod as mod

        def test_x(monkeypatch):
            for name in ("rr_setup",):
                monkeypatch.setattr(mod, name, lambda *args, **kwargs: None)
            with pytest.raises(SystemExit):
                mod.RaiseRunner.run(SimpleNamespace(rr_par=SimpleNamespace(size=1)))
        """,
        frozenset(),
    ),
]


MEETS = (
    "import asyncio, types\nimport vllm.mod as mod\n"
    "from vllm.mod import build_common, pass_on; from unittest.mock import MagicMock\n"
)
# Helpers of the test module, after the test (its line numbers stay).
MEETS_AFTER = (
    "\n\ndef holder(common):\n    meta = MagicMock()\n    meta.common = common\n    return meta\n"
    "\n\ndef runner():\n    return mod.Runner(1)\n"
)

# Where a namespace meets vLLM code other than an ``object.__new__`` stub's method: each case
# one test line (after ``ns = SimpleNamespace(other=1)`` on line 9 of the test file), the
# findings as ``kind name vllm-line test-line`` (the read in ``vllm/mod.py``, the line that
# builds the stand-in).
MEETING_CASES = [
    ("function-positional", "build_common(ns)", {"missing-field common.num_actual_tokens 83 9"}),
    (
        "function-keyword",
        "build_common(common=ns)",
        {"missing-field common.num_actual_tokens 83 9"},
    ),
    (
        "function-through-module",
        "mod.build_common(ns)",
        {"missing-field common.num_actual_tokens 83 9"},
    ),
    ("function-literal-skips-read", "build_common(ns, False)", set()),
    (
        "function-literal-default",
        "build_common(ns, flag=True)",
        {"missing-field common.num_actual_tokens 83 9"},
    ),
    (
        "function-passes-it-on",
        "pass_on(1, SimpleNamespace(common=ns))",
        {"missing-field meta.common.num_actual_tokens 83 9"},
    ),
    ("function-guarded-reads", "mod.guarded_fn(ns)", set()),
    ("function-kwargs-not-visible", "mod.with_kwargs(common=ns)", set()),
    ("staticmethod", "Builder.static_build(ns)", {"missing-field common.num_actual_tokens 68 9"}),
    ("classmethod", "Builder.from_common(ns)", {"missing-field common.num_actual_tokens 73 9"}),
    ("classmethod-literal-skips-read", "Builder.from_common(ns, flag=False)", set()),
    (
        "method-other-self",
        "Builder.maybe(object(), ns, True)",
        {"missing-field common.num_actual_tokens 16 9"},
    ),
    (
        "method-stub-self",
        "b = object.__new__(Builder); Builder.maybe(b, ns, True)",
        {"missing-field common.num_actual_tokens 16 9"},
    ),
    (
        "method-type-called",
        "types.MethodType(Builder.decode, ns)(1)",
        {"missing-attribute _decode_causal 23 9", "missing-attribute _new_field 23 9"},
    ),
    ("method-type-never-called", "bound = types.MethodType(Builder.decode, ns)", set()),
    (
        "descriptor-get-called",
        "Builder.decode.__get__(ns)(1)",
        {"missing-attribute _decode_causal 23 9", "missing-attribute _new_field 23 9"},
    ),
    (
        "descriptor-get-bound-then-called",
        "bound = Builder.decode.__get__(ns, Builder); bound(1)",
        {"missing-attribute _decode_causal 23 9", "missing-attribute _new_field 23 9"},
    ),
    (
        "property-fget",
        "Builder.total.fget(ns)",
        {"missing-attribute cfg 78 9", "missing-attribute _count 78 9"},
    ),
    (
        "self-keyword",
        "Builder.decode(self=ns, x=1)",
        {"missing-attribute _decode_causal 23 9", "missing-attribute _new_field 23 9"},
    ),
    (
        "self-keyword-alias",
        "decode = Builder.decode; decode(self=ns, x=1)",
        {"missing-attribute _decode_causal 23 9", "missing-attribute _new_field 23 9"},
    ),
    (
        "function-monkeypatched-helper",
        "monkeypatch.setattr(mod, 'build_common', len); pass_on(1, SimpleNamespace(common=ns))",
        set(),
    ),
    (
        "function-patched-through-a-local-import",
        "from vllm import mod as m2; monkeypatch.setattr(m2, 'build_common', len); "
        "pass_on(1, SimpleNamespace(common=ns))",
        set(),
    ),
    (
        "function-string-patched-helper",
        "monkeypatch.setattr('vllm.mod.build_common', len); pass_on(1, SimpleNamespace(common=ns))",
        set(),
    ),
    ("coroutine-not-awaited", "mod.run_later(ns)", set()),
    (
        "coroutine-awaited",
        "asyncio.run(mod.serve_now(ns))",
        {"missing-field common.num_actual_tokens 110 9"},
    ),
    ("the-namespace-sets-it", "build_common(SimpleNamespace(num_actual_tokens=1))", set()),
    (
        "field-of-a-plain-mock-handed-on",
        "meta = MagicMock(); meta.common = ns; pass_on(1, meta)",
        {"missing-field meta.common.num_actual_tokens 83 9"},
    ),
    (
        "field-of-a-plain-mock-made-self",
        "h = MagicMock(); h.mla_dims = ns; Builder.dims(h)",
        {
            "missing-field self.mla_dims.v_head_dim 20 9",
            "missing-field self.mla_dims.qk_nope_head_dim 20 9",
        },
    ),
    (
        "field-of-a-field-of-a-plain-mock",
        "app = MagicMock(); app.state.args = ns; mod.serve_app(app)",
        {"missing-field app.state.args.port 160 9"},
    ),
    (
        "two-namespaces-on-one-holder-are-one-object",
        "r = MagicMock(); r.a = SimpleNamespace(x=1); r.b = ns; mod.two(r)",
        {"missing-field runner.b.y 164 9"},
    ),
    (
        "field-of-a-holder-returned-by-a-helper",
        "meta = holder(ns); pass_on(1, meta)",
        {"missing-field meta.common.num_actual_tokens 83 9"},
    ),
    (
        "a-plain-mock-s-own-links-are-not-judged",
        "meta = MagicMock(); meta.other = ns; pass_on(1, meta)",
        set(),
    ),
    (
        "a-holder-handed-to-other-code-first-may-be-filled-in",
        "meta = MagicMock(); meta.common = ns; mod.fill_common(meta); pass_on(1, meta)",
        set(),
    ),
    (
        "a-holder-handed-first-to-code-that-only-probes-it",
        "meta = MagicMock(); meta.common = ns; mod.guarded_fn(meta); pass_on(1, meta)",
        {"missing-field meta.common.num_actual_tokens 83 9"},
    ),
    (
        "a-holder-whose-link-earlier-code-replaces-is-not-judged",
        "meta = MagicMock(); meta.common = ns; mod.swap_common(meta); pass_on(1, meta)",
        set(),
    ),
    (
        "a-holder-earlier-code-calls-a-method-of-may-be-filled-in",
        "meta = MagicMock(); meta.common = ns; mod.reset_meta(meta); pass_on(1, meta)",
        set(),
    ),
    (
        "constructor-keywords",
        "mod.Built(spec=SimpleNamespace(block_size=1, size=1), vllm_config=ns, device=None)",
        {
            "missing-field vllm_config.model_config 184 9",
            "missing-field vllm_config.parallel 189 9",
        },
    ),
    (
        "constructor-a-base-reads-a-namespace-stored-on-self",
        "mod.Built(SimpleNamespace(block_size=1, size=1), "
        "SimpleNamespace(model_config=SimpleNamespace(), parallel=SimpleNamespace(size=1)), None)",
        {"missing-field vllm_config.model_config.num_heads 185 10"},
    ),
    (
        "constructor-a-method-it-calls-reads-it-not-self",
        "mod.Built(SimpleNamespace(block_size=1, size=1), SimpleNamespace("
        "model_config=SimpleNamespace(num_heads=1), parallel=SimpleNamespace(size=2)), None)",
        {"missing-field vllm_config.parallel.rank 190 10"},
    ),
    (
        "constructor-a-field-stored-again-holds-the-new-value",
        "mod.Built(SimpleNamespace(block_size=1), SimpleNamespace("
        "model_config=SimpleNamespace(num_heads=1), parallel=SimpleNamespace(size=1)), None)",
        {"missing-field spec.size 202 10"},
    ),
    (
        "constructor-inherited-init",
        "mod.Inherits(SimpleNamespace(block_size=1, size=1), "
        "SimpleNamespace(model_config=SimpleNamespace(), parallel=SimpleNamespace(size=1)), None)",
        {"missing-field vllm_config.model_config.num_heads 185 10"},
    ),
    (
        "constructor-guarded-reads-and-fields-it-sets",
        "mod.Built(SimpleNamespace(block_size=1, size=1), SimpleNamespace("
        "model_config=SimpleNamespace(num_heads=1), parallel=SimpleNamespace(size=1)), None)",
        set(),
    ),
    ("constructor-with-a-base-outside-the-tree", "mod.FromOutside(ns)", set()),
    # ``self.training`` comes from the outside base: not a field the test lacks, so the
    # branch it decides stays undecided (a note, not an error)
    ("constructor-reads-of-self-are-not-missing", "mod.Layer(ns)", set()),
    ("constructor-of-a-dataclass", "mod.Fields(ns)", set()),
    ("function-passes-it-to-a-constructor", "mod.make(ns)", {"missing-field cfg.lookahead 237 9"}),
    (
        "function-passes-it-to-a-patched-constructor",
        "monkeypatch.setattr(mod, 'Coordinator', dict); mod.make(ns)",
        set(),
    ),
    (
        "constructor-passes-it-to-a-constructor-patched-through-a-re-export",
        "from vllm.pkg import model; monkeypatch.setattr(model, 'Inner', dict); model.Outer(ns)",
        set(),
    ),
    (
        "constructor-passes-it-to-a-constructor-of-a-re-exported-module",
        "from vllm.pkg import model; model.Outer(ns)",
        {"missing-field cfg.x 4 9"},
    ),
    (
        "constructor-a-stated-field-stored-on-self-decides-a-branch",
        "mod.Gated(SimpleNamespace(mode='on'))",
        {"missing-field cfg.extra 264 10"},
    ),
    (
        "constructor-a-stated-field-stored-on-self-skips-a-branch",
        "mod.Gated(SimpleNamespace(mode='off'))",
        set(),
    ),
    (
        "constructor-passes-it-on-to-a-classmethod",
        "mod.Scheduler(SimpleNamespace(block_sizes=[], sub=SimpleNamespace(lookahead=0)))",
        {"missing-field vllm_config.size 241 10"},
    ),
    (
        "constructor-passes-it-on-to-a-staticmethod-of-self",
        "mod.Scheduler(SimpleNamespace(size=1, sub=SimpleNamespace(lookahead=0)))",
        {"missing-field vllm_config.block_sizes 252 10"},
    ),
    (
        "constructor-passes-a-field-on-to-a-constructor",
        "mod.Scheduler(SimpleNamespace(size=1, block_sizes=[], sub=SimpleNamespace()))",
        {"missing-field vllm_config.sub.lookahead 237 10"},
    ),
    (
        "constructor-passes-it-on-the-namespace-sets-it",
        "mod.Scheduler(SimpleNamespace(size=1, block_sizes=[], sub=SimpleNamespace(lookahead=0)))",
        set(),
    ),
    (
        "instance-method-of-a-constructed-object",
        "mod.Runner(1).run(ns)",
        {"missing-field common.num_actual_tokens 275 9"},
    ),
    (
        "instance-method-through-a-local",
        "r = mod.Runner(1); r.run(ns)",
        {"missing-field common.num_actual_tokens 275 9"},
    ),
    (
        "instance-method-of-an-object-built-by-new",
        "r = mod.Runner.__new__(mod.Runner); r.size = 1; r.run(ns)",
        {"missing-field common.num_actual_tokens 275 9"},
    ),
    (
        "instance-method-the-test-replaced-on-the-object",
        "r = mod.Runner(1); r.step = len; r.run(ns)",
        set(),
    ),
    (
        "instance-method-an-attribute-set-by-a-computed-name",
        "r = mod.Runner(1); setattr(r, name, len); r.run(ns)",
        set(),
    ),
    (
        "instance-method-the-namespace-holds-the-field",
        "mod.Runner(1).run(SimpleNamespace(num_actual_tokens=1))",
        set(),
    ),
    (
        "instance-method-of-an-object-a-helper-builds",
        "r = runner(); r.run(ns)",
        {"missing-field common.num_actual_tokens 275 9"},
    ),
    (
        "instance-method-reads-the-namespace-the-test-set-on-it",
        "r = mod.Runner(1); r.cfg = ns; r.run_cfg()",
        {"missing-field self.cfg.num_actual_tokens 282 9"},
    ),
    (
        "instance-method-the-namespace-set-on-it-holds-the-field",
        "r = mod.Runner(1); r.cfg = SimpleNamespace(num_actual_tokens=1); r.run_cfg()",
        set(),
    ),
    (
        "instance-method-called-before-the-namespace-is-set",
        "r = mod.Runner(1); r.run_cfg(); r.cfg = ns",
        set(),
    ),
    (
        "instance-staticmethod-of-a-constructed-object",
        "mod.Runner(1).check(ns)",
        {"missing-field common.num_reqs 279 9"},
    ),
]


@pytest.mark.parametrize(
    ("test", "expected"), [c[1:] for c in MEETING_CASES], ids=[c[0] for c in MEETING_CASES]
)
def test_standin_meetings(tmp_path, test, expected):
    body = test.replace("; ", "\n    ")  # one statement a line
    root, path = _tree(
        tmp_path,
        f"{MEETS}\ndef test_x(monkeypatch):\n    ns = SimpleNamespace(other=1)\n    {body}\n"
        + MEETS_AFTER,
    )
    result = StubAuditor(root).audit_paths([path], standins=True)
    found = {
        f"{f.kind.value} {f.name} {f.vllm_location.line} {f.stub_location.line}"
        for f in result.findings
        if f.kind in (ERROR, SELF) and f.vllm_location.path.endswith(("mod.py", "impl.py"))
    }
    assert found == expected


# A package that re-exports a module under another name (as ``vllm.models.beam`` picks its
# platform's ``model``): a test patches a name through that alias.
PACKAGE = {
    "__init__.py": "from .plat import impl as model\n",
    "plat/__init__.py": "",
    "plat/impl.py": """
class Inner:
    def __init__(self, cfg):
        self.x = cfg.x


class Outer:
    def __init__(self, cfg):
        self.inner = Inner(cfg)
""",
}


def _tree(tmp_path: Path, test: str) -> tuple[Path, Path]:
    (tmp_path / "vllm" / "pkg" / "plat").mkdir(parents=True)
    (tmp_path / "vllm" / "__init__.py").write_text("")
    (tmp_path / "vllm" / "mod.py").write_text(BUILDER)
    for name, text in PACKAGE.items():
        (tmp_path / "vllm" / "pkg" / name).write_text(text)
    path = tmp_path / "tests" / "test_case.py"
    path.parent.mkdir()
    path.write_text(HEAD + textwrap.dedent(test))
    return tmp_path, path


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_standin_findings(tmp_path, case):
    root, path = _tree(tmp_path, case.test)
    result = StubAuditor(root).audit_paths([path], standins=True)
    found = {
        (f.kind, f.name)
        for f in result.findings
        if f.kind in (ERROR, NOTE, SELF, STALE)
        and any(
            word in f.message for word in ("stand", "made self", "SimpleNamespace", "spec'd mock")
        )
    }
    assert found == case.expected


def test_without_the_flag_no_standin_is_audited(tmp_path):
    root, path = _tree(tmp_path, CASES[0].test)
    result = StubAuditor(root).audit_paths([path])
    assert not any(f.kind is ERROR for f in result.findings)


# A helper of a shared module (``tests/utils.py``) returns a stub with a namespace on its
# field (0.33.0's ``make_nixl_scheduler``: ``sched.vllm_config = SimpleNamespace(...)``); the
# test module that imports it calls the stub's methods.
SHARED_HELPER = """
from types import SimpleNamespace
from vllm.mod import Builder


def make_builder():
    b = object.__new__(Builder)
    b.mla_dims = SimpleNamespace(v_head_dim=1)
    return b


def make_full_builder():
    b = object.__new__(Builder)
    b.mla_dims = SimpleNamespace(v_head_dim=1, qk_nope_head_dim=2)
    return b
"""


@pytest.mark.parametrize(
    ("helper", "expected"),
    [
        ("make_builder", {(ERROR, "self.mla_dims.qk_nope_head_dim")}),
        ("make_full_builder", set()),
    ],
)
def test_a_shared_helper_s_namespace_on_its_stub_is_judged_in_the_calling_test(
    tmp_path, helper, expected
):
    root, _ = _tree(tmp_path, "")
    (root / "tests" / "__init__.py").write_text("")
    (root / "tests" / "utils.py").write_text(SHARED_HELPER)
    (root / "tests" / "test_case.py").write_text(
        f"from tests.utils import {helper}\n\n\ndef test_x():\n    b = {helper}()\n    b.dims()\n"
    )
    result = StubAuditor(root).audit_paths([root / "tests"], standins=True)
    found = {(f.kind, f.name) for f in result.findings if f.kind in (ERROR, NOTE, SELF)}
    assert found == expected


@pytest.mark.parametrize(
    ("helper", "folder", "expected"),
    [
        ("make_builder", "", {(ERROR, "self.mla_dims.qk_nope_head_dim")}),
        ("make_full_builder", "", set()),
        # a test module below the helper's folder is not looked for (no tree-wide scan)
        ("make_builder", "sub", set()),
    ],
)
def test_a_shared_helper_audited_alone_is_judged_in_the_test_modules_beside_it(
    tmp_path, helper, folder, expected
):
    root, _ = _tree(tmp_path, "")
    (root / "tests" / "__init__.py").write_text("")
    (root / "tests" / "test_case.py").unlink()
    helper_path = root / "tests" / "utils.py"
    helper_path.write_text(SHARED_HELPER)
    caller = root / "tests" / folder / "test_caller.py"
    caller.parent.mkdir(exist_ok=True)
    (caller.parent / "__init__.py").write_text("")
    caller.write_text(
        f"from types import SimpleNamespace\nfrom tests.utils import {helper}\n\n\n"
        f"def test_x():\n    b = {helper}()\n    b.dims()\n"
        "    b.gone()  # a missing method: reported on the caller's file, not audited here\n"
    )
    result = StubAuditor(root).audit_paths([helper_path], standins=True)
    assert {(f.kind, f.name) for f in result.findings} == expected


# -- what applies to a stub's findings applies to a stand-in's (issue 19) ---------------------
# A tree whose test meets vLLM code with namespaces in each way the audit follows: handed to a
# function (a link missing on an undecided branch, a note; a field no code reads, a stale-field
# warning), handed to a stub's method (a missing link, an error), made ``self`` (a missing
# field, an error).  The baseline, the inline comment on the line that builds the namespace,
# the allowlist, ``--base-src`` and ``--format github`` each act on those findings as on a
# stub's; each test also runs the input that must not pass.

ADOPTION_MOD = """
def build(cfg, flag):
    if flag:
        return cfg.extra
    return cfg.n


class Builder:
    def run(self, common):
        return common.size

    def decode(self):
        return self.known + self.missing
"""

ADOPTION_TEST = """
from types import SimpleNamespace

from vllm.mod import Builder, build


def test_handed(flag):
    cfg = SimpleNamespace(n=1, unused=2)  # HANDED
    build(cfg, flag)


def test_stub_argument():
    b = object.__new__(Builder)
    common = SimpleNamespace(other=1)  # STUB
    b.run(common)


def test_made_self():
    ns = SimpleNamespace(known=1)  # SELF
    Builder.decode(ns)
"""

#: ``kind name`` of each finding of ``ADOPTION_TEST`` (notes included).
ADOPTION_FINDINGS = {
    "possibly-missing-attribute cfg.extra",
    "stale-field unused",
    "missing-field common.size",
    "missing-attribute missing",
}


def _adoption(tmp_path: Path, test: str = ADOPTION_TEST, mod: str = ADOPTION_MOD) -> Path:
    root = tmp_path / "src"
    (root / "vllm").mkdir(parents=True, exist_ok=True)
    (root / "vllm" / "__init__.py").write_text("")
    (root / "vllm" / "mod.py").write_text(mod)
    (root / "tests").mkdir(exist_ok=True)
    (root / "tests" / "test_x.py").write_text(test)
    return root


def _found(out: str) -> set[str]:
    return {f"{f['kind']} {f['name']}" for f in json.loads(out)}


def _audit_json(root: Path, *args: str, capsys) -> tuple[int, set[str]]:
    status, out, err = cli(
        root,
        "--standins",
        "--no-cache",
        "--format",
        "json",
        *args,
        str(root / "tests"),
        capsys=capsys,
    )
    assert status in (0, 1), err
    return status, _found(out)


def test_adoption_tree_has_a_finding_of_each_route(tmp_path, capsys):
    status, found = _audit_json(_adoption(tmp_path), capsys=capsys)
    assert (status, found) == (1, ADOPTION_FINDINGS)


def test_a_baseline_knows_standin_findings_by_keys_without_lines(tmp_path, capsys):
    root = _adoption(tmp_path)
    baseline = tmp_path / "baseline.txt"
    status, out, err = cli(
        root,
        "--standins",
        "--no-cache",
        "--write-baseline",
        str(baseline),
        str(root / "tests"),
        capsys=capsys,
    )
    assert status == 0, out + err  # what it records does not fail
    keys = [line for line in baseline.read_text().splitlines() if not line.startswith("#")]
    assert sorted(keys) == [
        "tests/test_x.py::missing-attribute:Builder.decode:missing",
        "tests/test_x.py::missing-field:Builder.run:common.size",
        "tests/test_x.py::possibly-missing-attribute:vllm.mod.build:cfg.extra",
        "tests/test_x.py::stale-field:types.SimpleNamespace.build:unused",
    ]
    # Lines moved: every finding is still known.
    (root / "tests" / "test_x.py").write_text("# a comment moves every line\n" + ADOPTION_TEST)
    known = ("--baseline", str(baseline))
    assert _audit_json(root, *known, capsys=capsys) == (0, set())
    # A second namespace lacking the same link in the file is a new finding.
    (root / "tests" / "test_x.py").write_text(
        ADOPTION_TEST
        + "\n\ndef test_again():\n    b = object.__new__(Builder)\n    b.run(SimpleNamespace())\n"
    )
    assert _audit_json(root, *known, capsys=capsys) == (1, {"missing-field common.size"})


@pytest.mark.parametrize(
    ("marker", "kinds", "silenced"),
    [
        (
            "HANDED",
            "possibly-missing-attribute, stale-field",
            ADOPTION_FINDINGS - {"missing-field common.size", "missing-attribute missing"},
        ),
        ("STUB", "missing-field", {"missing-field common.size"}),
        ("SELF", "missing-attribute", {"missing-attribute missing"}),
        (
            "HANDED",
            "",
            ADOPTION_FINDINGS - {"missing-field common.size", "missing-attribute missing"},
        ),
        # A comment naming another kind silences nothing.
        ("HANDED", "missing-field", set()),
        ("STUB", "stale-field", set()),
        ("SELF", "missing-field", set()),
    ],
)
def test_a_comment_on_the_line_that_builds_a_namespace_silences_its_findings(
    tmp_path, capsys, marker, kinds, silenced
):
    comment = "# audit-stubs: ignore" + (f"[{kinds}]" if kinds else "")
    root = _adoption(tmp_path, ADOPTION_TEST.replace(f"# {marker}", comment))
    _, found = _audit_json(root, "--show-possible", capsys=capsys)
    assert found == ADOPTION_FINDINGS - silenced


def test_a_comment_naming_no_kind_on_a_namespace_s_line_is_exit_2(tmp_path, capsys):
    root = _adoption(tmp_path, ADOPTION_TEST.replace("# HANDED", "# audit-stubs: ignore[nope]"))
    status, out, err = cli(root, "--standins", "--no-cache", str(root / "tests"), capsys=capsys)
    assert (status, out) == (2, "")
    assert "names no finding kind" in err and len(err.strip().splitlines()) == 1


@pytest.mark.parametrize(
    ("patterns", "left"),
    [
        (
            [
                "missing-field:Builder.run:common.size",
                "stale-field:types.SimpleNamespace.build:unused",
                "tests/test_x.py::missing-attribute:Builder.decode:*",
            ],
            {"possibly-missing-attribute cfg.extra"},
        ),
        # Patterns for other links, fields or files silence nothing.
        (
            [
                "missing-field:Builder.run:common.other",
                "stale-field:types.SimpleNamespace.build:n",
                "tests/other.py::missing-attribute:Builder.decode:*",
            ],
            ADOPTION_FINDINGS,
        ),
    ],
)
def test_the_allowlist_silences_standin_findings(tmp_path, capsys, patterns, left):
    root = _adoption(tmp_path)
    allow = tmp_path / "allow.txt"
    allow.write_text("\n".join(patterns) + "\n")
    _, found = _audit_json(root, "--allowlist", str(allow), capsys=capsys)
    assert found == left


@pytest.mark.parametrize(
    ("base", "expected"),
    [
        # The base did not read ``cfg.extra``: the change added it, an error.
        (
            ADOPTION_MOD.replace("return cfg.extra", "return 0"),
            ADOPTION_FINDINGS - {"possibly-missing-attribute cfg.extra"}
            | {"newly-read-attribute cfg.extra"},
        ),
        # The base read it too: still a note (the base is audited with its namespaces).
        (ADOPTION_MOD, ADOPTION_FINDINGS),
    ],
)
def test_base_src_a_namespace_read_the_change_added_is_an_error(tmp_path, capsys, base, expected):
    root = _adoption(tmp_path)
    old = tmp_path / "old"
    (old / "vllm").mkdir(parents=True)
    (old / "vllm" / "__init__.py").write_text("")
    (old / "vllm" / "mod.py").write_text(base)
    status, found = _audit_json(root, "--base-src", str(old), capsys=capsys)
    assert (status, found) == (1, expected)


def test_github_format_annotates_standin_findings(tmp_path, capsys):
    root = _adoption(tmp_path)
    args = ("--standins", "--no-cache", "--format", "github")
    status, out, _ = cli(root, *args, str(root / "tests"), capsys=capsys)
    levels = sorted(line.split(" ", 1)[0] for line in out.splitlines())
    assert (status, levels) == (1, ["::error", "::error", "::warning"])
    assert all(",line=" in line and "test_x.py" in line for line in out.splitlines())
    status, out, _ = cli(root, *args, "--show-possible", str(root / "tests"), capsys=capsys)
    assert sorted(line.split(" ", 1)[0] for line in out.splitlines()) == [
        "::error",
        "::error",
        "::notice",
        "::warning",
    ]
    # Namespaces that hold every field read: nothing to annotate.
    clean = (
        ADOPTION_TEST.replace("n=1, unused=2", "n=1, extra=2")
        .replace("other=1", "size=1")
        .replace("known=1", "known=1, missing=2")
    )
    root = _adoption(tmp_path / "clean", clean)
    assert cli(root, *args, "--show-possible", str(root / "tests"), capsys=capsys)[:2] == (0, "")


# A helper that passes on one of several namespaces (its callers'): a link every one of them
# lacks is named on each, where each is built (0.32.0's ``_make_tier``).
ALTERNATIVES = """
from vllm.mod import read_b


def _run(runner):
    return read_b(runner)


def test_x():
    _run(SimpleNamespace({fields}))


def test_y():
    _run(SimpleNamespace(a=3))
"""


@pytest.mark.parametrize(
    ("fields", "named"),
    [("a=2", {"test_x", "test_y"}), ("b=2", set())],
)
def test_a_link_every_alternative_lacks_is_named_on_each(tmp_path, fields, named):
    test = ALTERNATIVES.format(fields=fields)
    root, path = _tree(tmp_path, test)
    result = StubAuditor(root).audit_paths([path], standins=True)
    lines = (HEAD + textwrap.dedent(test)).splitlines()
    where = {
        name: lines.index(f"def {name}():") + 2  # the namespace built in its body
        for name in ("test_x", "test_y")
    }
    found = {
        f.stub_location.line for f in result.findings if f.kind is ERROR and f.name == "runner.b"
    }
    assert found == {where[name] for name in named}


def test_the_builder_source_defines_each_name_once():
    """Case rows of several branches append to ``BUILDER``: a second ``def`` of a name would
    silently replace the first, and the rows written against it would test other code."""
    import ast
    import collections

    names = collections.Counter(
        target.id if isinstance(target, ast.Name) else None
        for node in ast.parse(BUILDER).body
        for target in (
            node.targets
            if isinstance(node, ast.Assign)
            else [ast.Name(node.name)]
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
            else []
        )
    )
    assert [name for name, count in names.items() if name and count > 1] == []
