"""Precision fixes of the read-set analyzer, each pinned on a tiny synthetic source tree.

Every case came out of judging the audit's findings on vLLM 0.34.0's own tests
(``docs/AUDIT-VLLM-0.34.md``): a shape of test or source the analyzer got wrong.  Each test
builds a mini ``vllm/`` package and one test file in ``tmp_path`` and checks both sides: the
false finding is gone, and a field that is genuinely missing in the same shape is still
reported (a check that cannot fail proves nothing).
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from factories.analysis.audit import AuditResult, StubAuditor
from factories.analysis.findings import FindingKind

#: Tests of this project's analyzer on pinned release sources, never on the vLLM under test:
#: they run with --selfcheck (CI), not in a developer's plain ``pytest contracts/``.
pytestmark = pytest.mark.selfcheck


def audit(tmp_path: Path, source: str, test: str) -> AuditResult:
    """Audit ``test`` (a test file) against a tree whose only module is ``vllm/mod.py``."""
    root = tmp_path / "src"
    (root / "vllm").mkdir(parents=True)
    (root / "vllm" / "__init__.py").write_text("")
    (root / "vllm" / "mod.py").write_text(textwrap.dedent(source))
    test_file = tmp_path / "test_stub.py"
    test_file.write_text(textwrap.dedent(test))
    return StubAuditor(root).audit_paths([test_file])


def missing(result: AuditResult) -> set[tuple[str, str]]:
    return {(f.method, f.name) for f in result.findings if f.kind is FindingKind.MISSING_ATTRIBUTE}


def possible(result: AuditResult) -> set[tuple[str, str]]:
    """Reads the stub lacks on a path the test may not take (the non-failing note level)."""
    return {
        (f.method, f.name)
        for f in result.findings
        if f.kind is FindingKind.POSSIBLY_MISSING_ATTRIBUTE
    }


def stale(result: AuditResult) -> set[str]:
    return {f.name for f in result.findings if f.kind is FindingKind.STALE_FIELD}


# -- how the test sets and uses the stub -------------------------------------------------

LAYER = """
    class Layer:
        def __init__(self, prefix, size):
            self.prefix = prefix
            self.size = size

        def forward(self):
            return self.prefix, self.size
"""


def test_object_setattr_sets_the_field(tmp_path):
    """nn.Module stubs are filled with ``object.__setattr__`` (0.34: KimiLinearModel,
    NemotronH_Nano_VL_V2): that is a set, and it does not hand the stub to other code."""
    result = audit(
        tmp_path,
        LAYER,
        """
        from vllm.mod import Layer

        def test_forward():
            layer = object.__new__(Layer)
            object.__setattr__(layer, "prefix", "model.layers.0")
            object.__setattr__(layer, "unused", 1)
            layer.forward()
        """,
    )
    assert missing(result) == {("forward", "size")}
    assert stale(result) == {"unused"}  # the stub did not escape


def test_object_setattr_with_a_computed_name_makes_the_stub_opaque(tmp_path):
    result = audit(
        tmp_path,
        LAYER,
        """
        from vllm.mod import Layer

        def test_forward():
            layer = object.__new__(Layer)
            for name, value in {"prefix": "p", "size": 1}.items():
                object.__setattr__(layer, name, value)
            layer.forward()

        def test_forward_literal():
            layer = object.__new__(Layer)
            layer.prefix = "p"
            layer.forward()
        """,
    )
    # The loop may set anything, so nothing is claimed missing for the first stub ...
    lines = Path(result.findings[0].stub_location.path).read_text().splitlines()
    assert [lines[f.stub_location.line - 2].strip() for f in result.findings] == [
        "def test_forward_literal():"
    ]
    # ... while the second, with only literal sets, still lacks ``size``.
    assert missing(result) == {("forward", "size")}


def test_stub_passed_to_a_same_module_helper_gets_the_helpers_sets_and_calls(tmp_path):
    """``_refresh(worker)`` sets a field and calls a method on the stub (0.34:
    test_mooncake_store_worker.py's ``_refresh_group_tp_replication_factors``)."""
    result = audit(
        tmp_path,
        """
        class Worker:
            def build(self):
                self.prefixes = tuple(self.factors) + tuple(self.tokens)

            def lookup(self):
                return self.prefixes, self.limit
        """,
        """
        from vllm.mod import Worker

        def _refresh(w):
            w.factors = (1,)
            w.build()

        def test_lookup():
            worker = object.__new__(Worker)
            worker.tokens = [1]
            worker.unused = 0
            _refresh(worker)
            worker.lookup()
        """,
    )
    # ``factors`` (set in the helper) and ``prefixes`` (written by the helper's build())
    # are not missing; ``limit`` really is.  The stub no longer escapes, so a field nothing
    # reads is stale.
    assert missing(result) == {("lookup", "limit")}
    assert stale(result) == {"unused"}


def test_fields_the_test_reads_itself_are_not_stale(tmp_path):
    """0.34's scheduler tests set ``finished_req_ids`` for a callback closure that vLLM
    calls back; aux-output tests assert on a mock field the code was meant not to use."""
    result = audit(
        tmp_path,
        """
        class Scheduler:
            def step(self):
                self.free(1)
        """,
        """
        from vllm.mod import Scheduler

        def test_step():
            scheduler = object.__new__(Scheduler)
            scheduler.finished = set()
            scheduler.capturer = object()
            scheduler.dead = 0

            def free(req):
                scheduler.finished.add(req)

            scheduler.free = free
            scheduler.step()
            assert scheduler.capturer is not None
        """,
    )
    assert stale(result) == {"dead"}
    assert missing(result) == set()


def test_class_patch_made_in_a_helper_replaces_the_method(tmp_path):
    """``_mock_base_model_load(monkeypatch)`` patches a base-class method for every instance
    (0.34: test_gpu_target_dependent_ar_speculator.py); the real method must not be followed."""
    source = """
        class Base:
            def _validate(self):
                if self.flag:
                    return self.cfg

        class Child(Base):
            def load(self):
                self._validate()
                return self.model
    """
    patched = audit(
        tmp_path / "patched",
        source,
        """
        from vllm.mod import Base, Child

        def _mock_validate(monkeypatch):
            monkeypatch.setattr(Base, "_validate", lambda self: None)

        def _mock_all(monkeypatch):
            _mock_validate(monkeypatch)

        def test_load(monkeypatch):
            child = object.__new__(Child)
            _mock_all(monkeypatch)
            child.load()
        """,
    )
    assert missing(patched) == {("load", "model")}
    unpatched = audit(
        tmp_path / "unpatched",
        source,
        """
        from vllm.mod import Child

        def _build(n):
            return n

        def test_load(monkeypatch):
            child = object.__new__(Child)
            _build(1)
            child.load()
        """,
    )
    assert missing(unpatched) == {("load", "model"), ("load", "flag")}
    assert possible(unpatched) == {("load", "cfg")}  # only when ``self.flag`` is true


INHERITED = """
    class Root:
        def build(self):
            return self.root_field

    class Mid(Root):
        pass

    class Leaf(Mid):
        def build(self):
            return self.leaf_build_field

        def run(self):
            return super().build(), self.leaf_field
"""


def test_patching_an_inherited_method_on_a_subclass_replaces_it(tmp_path):
    """``monkeypatch.setattr(Parent, "build", fake)`` where ``Parent`` inherits ``build``
    (0.34: FlashInferMLASparseMetadataBuilder, DeepseekV4SparseMLAMetadataBuilder): the
    patch shadows the base's ``build`` for every class below ``Parent``."""
    result = audit(
        tmp_path,
        INHERITED,
        """
        from vllm.mod import Leaf, Mid

        def test_run(monkeypatch):
            monkeypatch.setattr(Mid, "build", lambda self: None)
            leaf = object.__new__(Leaf)
            leaf.run()
        """,
    )
    assert missing(result) == {("run", "leaf_field")}


def test_a_patch_that_super_searches_past_does_not_apply(tmp_path):
    result = audit(
        tmp_path,
        INHERITED,
        """
        from vllm.mod import Leaf

        def test_run(monkeypatch):
            monkeypatch.setattr(Leaf, "build", lambda self: None)
            leaf = object.__new__(Leaf)
            leaf.run()
        """,
    )
    # ``super().build()`` in Leaf skips Leaf's (patched) attribute and runs Root.build.
    assert missing(result) == {("run", "leaf_field"), ("run", "root_field")}


def test_patch_by_dotted_string_replaces_the_method(tmp_path):
    """``monkeypatch.setattr("vllm.x.Sampler._sample", fake)`` and ``@patch("...")`` name the
    class by its full path (0.34: test_watermarking.py patches Sampler._sample_random)."""
    source = """
        class Sampler:
            def _sample(self):
                return self.use_fp64

        class WatermarkSampler(Sampler):
            def sample(self):
                return super()._sample(), self.watermarker
    """
    test = """
        from unittest.mock import patch

        from vllm.mod import WatermarkSampler

        def test_monkeypatch(monkeypatch):
            monkeypatch.setattr("vllm.mod.Sampler._sample", lambda self: None)
            sampler = object.__new__(WatermarkSampler)
            sampler.sample()

        @patch("vllm.mod.Sampler._sample")
        def test_decorator(fake):
            sampler = object.__new__(WatermarkSampler)
            sampler.sample()

        @patch("vllm.mod.Sampler.other")
        def test_other_method(fake):
            sampler = object.__new__(WatermarkSampler)
            sampler.sample()
    """
    result = audit(tmp_path, source, test)
    lines = Path(result.findings[0].stub_location.path).read_text().splitlines()
    by_test = {(lines[f.stub_location.line - 2].strip(), f.name) for f in result.findings}
    assert by_test == {
        ('monkeypatch.setattr("vllm.mod.Sampler._sample", lambda self: None)', "watermarker"),
        ("def test_decorator(fake):", "watermarker"),
        ("def test_other_method(fake):", "watermarker"),
        ("def test_other_method(fake):", "use_fp64"),
    }


# -- how vLLM reads the fields -----------------------------------------------------------


def test_hasattr_guard_narrows_the_branch_it_protects(tmp_path):
    """``if not hasattr(self, "_supported_tasks"): self._supported_tasks = ...`` (0.34:
    LLMEngine/AsyncLLM.get_supported_tasks) leaves nothing for the stub to set."""
    result = audit(
        tmp_path,
        """
        class Engine:
            def tasks(self):
                if not hasattr(self, "_cached"):
                    self._cached = self.compute()
                if hasattr(self, "_extra") and self._extra.ready:
                    pass
                if hasattr(self, "_opt"):
                    pass
                return self._cached, self._opt, self.other

            def compute(self):
                return 1
        """,
        """
        from vllm.mod import Engine

        def test_tasks():
            engine = object.__new__(Engine)
            engine.tasks()
        """,
    )
    # ``_opt`` is read after the guarded block, where nothing proves it exists.
    assert missing(result) == {("tasks", "_opt"), ("tasks", "other")}


def test_attributes_every_object_has_are_never_missing(tmp_path):
    """``self.__dict__.setdefault(...)`` (0.34: CudaCommunicator) and ``self.__class__``."""
    result = audit(
        tmp_path,
        """
        class Communicator:
            def scratch(self):
                cache = self.__dict__.setdefault("_bufs", {})
                return cache, self.__class__.__name__, self.group
        """,
        """
        from vllm.mod import Communicator

        def test_scratch():
            comm = object.__new__(Communicator)
            comm.scratch()
        """,
    )
    assert missing(result) == {("scratch", "group")}


PRUNED = """
    class Runner:
        def run(self, level=1):
            if self.has_x and self.cfg:
                pass
            picked = self.a if self.mode == 2 else self.b
            if self.n > 0 or self.other:
                pass
            discard = self.discardable() if level == 2 else None
            return picked, discard

        def discardable(self):
            return self.secret
"""


@pytest.mark.parametrize(
    "has_x, mode, n, level, expected",
    [
        # ``0 > 0`` is False, so ``or`` goes on to read ``other``; ``b`` is the taken branch.
        (False, 1, 0, 1, {("run", "b"), ("run", "other")}),
        # the same shape with the other literals reads the other side
        (True, 2, 3, 2, {("run", "cfg"), ("run", "a"), ("run", "secret")}),
    ],
    ids=["one-side", "other-side"],
)
def test_literal_values_prune_short_circuits_and_conditional_expressions(
    tmp_path, has_x, mode, n, level, expected
):
    """The literal pruning the analyzer already did for ``if`` now also covers ``and``/``or``
    operands and ``x if c else y`` (0.34: Scheduler.update_from_output with
    ``has_mamba_layers = False``, Worker.sleep's ``... if level == 2 else ...``)."""
    result = audit(
        tmp_path,
        PRUNED,
        f"""
        from vllm.mod import Runner

        def test_run():
            runner = object.__new__(Runner)
            runner.has_x = {has_x}
            runner.mode = {mode}
            runner.n = {n}
            runner.run(level={level})
        """,
    )
    assert missing(result) == expected


def test_assertion_message_is_not_a_read(tmp_path):
    """``assert ok, f"... {self.layer_name}"`` (0.34: RoutedExperts.weight_loader): the
    message runs only when the assertion already failed the test."""
    result = audit(
        tmp_path,
        """
        class Experts:
            def load(self, expert_id):
                assert expert_id < self.num_experts, f"{self.layer_name}: {expert_id}"
        """,
        """
        from vllm.mod import Experts

        def test_load():
            experts = object.__new__(Experts)
            experts.load(0)
        """,
    )
    assert missing(result) == {("load", "num_experts")}


CLASS_DEFAULT = """
    class Base:
        use_fast = False

    class Impl(Base):
        def __init__(self, fast):
            if fast:
                self.use_fast = True
                self.fast_kernel = object()
            self.slow_kernel = object()

        def maybe_enable(self, on):
            if on:
                self.use_fast = True

        def forward(self):
            if self.use_fast:
                return self.fast_kernel
            return self.slow_kernel
"""


def test_literal_class_attribute_decides_a_branch_for_a_stub(tmp_path):
    """An ``object.__new__`` instance reads the class-level ``use_fast = False`` (0.34:
    ROCMAiterMLASparseImpl.use_aiter_sparse_mla, DraftModelSpeculator
    .can_reuse_target_attn_metadata) until something assigns it on the instance."""
    result = audit(
        tmp_path,
        CLASS_DEFAULT,
        """
        from vllm.mod import Impl

        def test_default():
            impl = object.__new__(Impl)
            impl.forward()

        def test_switched_on():
            impl = object.__new__(Impl)
            impl.use_fast = True
            impl.forward()
        """,
    )
    by_stub = {(f.stub_location.line, f.name) for f in result.findings}
    assert by_stub == {(5, "slow_kernel"), (9, "fast_kernel")}


def test_class_attribute_an_earlier_call_may_assign_is_not_trusted(tmp_path):
    result = audit(
        tmp_path,
        CLASS_DEFAULT,
        """
        from vllm.mod import Impl

        def test_enabled_then_forward(flag):
            impl = object.__new__(Impl)
            impl.maybe_enable(flag)
            impl.forward()
        """,
    )
    # Not trusted, so undecided: each kernel is read on one arm only (the note level).
    assert missing(result) == set()
    assert possible(result) == {("forward", "fast_kernel"), ("forward", "slow_kernel")}


# -- what the test's inputs select (issue 12): each rule suppresses an error on one input
# and still reports it on another ---------------------------------------------------------

SELECTED = """
    import enum

    class Kind(enum.Enum):
        DECODER = 1
        ENCODER = 2

    def helper():
        return 1

    async def pause():
        return None

    class Impl:
        def branchy(self, flag):
            if flag.on:
                flag.value = self.guarded
            return self.main

        def build(self, meta):
            if meta.num_tokens == 0:
                return None
            return self.buffers

        def cached(self, cache=None):
            if cache is not None:
                return self.cache_dtype
            return None

        def by_kind(self):
            if self.kind == Kind.ENCODER:
                return self.encoder
            return None

        def nested(self, meta):
            if meta.prefill.n == 0:
                return None
            return self.prefill_buf

        def fetch_then(self):
            self.fetch()
            return self.after

        def patched_then(self):
            helper()
            return self.after

        async def task(self):
            await pause()
            return self.after

        def one_arm(self, flag):
            if flag.on:
                return self.shared + 1
            return None

        def every_arm(self, flag):
            if flag.on:
                return self.shared + 1
            else:
                return self.shared - 1

        def provisioned(self, flag):
            if flag.on:
                return self.prefix + self.fresh
            return None

        def read_before(self, flag):
            self.prefix.strip()
            if flag.on:
                return self.prefix + self.fresh
            return None

        def provisioned_loop(self, items):
            for item in items:
                self.sink.append(item + self.offset)

        def provisioned_then_exit(self, flag):
            if flag.on:
                head = self.prefix
                if flag.early:
                    return head
                return self.fresh
            return None

        def both_prepared(self, flag):
            if flag.on:
                out = self.prefix + self.fresh
            else:
                out = self.other
            return out

        def new_guard(self, req):
            if req in self.invalid:
                return None
            return self.after

        def either(self):
            return self.owns or self.epoch

        def sized(self, idx):
            num_reqs = idx.shape[0]
            if not num_reqs:
                return None
            return self.table
"""

SELECTED_CASES = {
    # an undecided branch: its read is a note, the read on every path an error
    "undecided-branch": (
        "impl.main = 1\n    impl.branchy(obj)",
        "impl.branchy(obj)",
        set(),
        {("branchy", "main")},
    ),
    "constructed-argument": (
        "impl.build(Meta(num_tokens=0))",
        "impl.build(Meta(num_tokens=4))",
        set(),
        {("build", "buffers")},
    ),
    "none-versus-object": (
        "impl.cached(cache=None)",
        "impl.cached(cache=Mock())",
        set(),
        {("cached", "cache_dtype")},
    ),
    "enum-member": (
        "impl.kind = Kind.DECODER\n    impl.by_kind()",
        "impl.kind = Kind.ENCODER\n    impl.by_kind()",
        set(),
        {("by_kind", "encoder")},
    ),
    "nested-namespace": (
        "impl.nested(SimpleNamespace(prefill=SimpleNamespace(n=0)))",
        "impl.nested(SimpleNamespace(prefill=SimpleNamespace(n=3)))",
        set(),
        {("nested", "prefill_buf")},
    ),
    "raising-mock": (
        "impl.fetch = Mock(side_effect=RuntimeError)\n    impl.fetch_then()",
        "impl.fetch = Mock(return_value=1)\n    impl.fetch_then()",
        set(),
        {("fetch_then", "after")},
    ),
    "pytest-raises-and-a-raising-patch": (
        "monkeypatch.setattr(mod, 'helper', Mock(side_effect=Stop))\n"
        "    with pytest.raises(Stop):\n        impl.patched_then()",
        "monkeypatch.setattr(mod, 'helper', Mock(return_value=1))\n    impl.patched_then()",
        set(),
        {("patched_then", "after")},
    ),
    # a read that every arm of an undecided branch makes is needed whichever arm runs
    "read-on-every-arm": (
        "impl.one_arm(obj)",
        "impl.every_arm(obj)",
        set(),
        {("every_arm", "shared")},
    ),
    # the test set a field only one undecided block reads: it means that block to run
    "provisioned-if-arm": (
        "impl.prefix = 'p'\n    impl.read_before(obj)",
        "impl.prefix = 'p'\n    impl.provisioned(obj)",
        set(),
        {("provisioned", "fresh")},
    ),
    "provisioned-loop-body": (
        "impl.provisioned_loop(obj)",
        "impl.sink = []\n    impl.provisioned_loop(obj)",
        set(),
        {("provisioned_loop", "offset")},
    ),
    "provisioned-block-ends-at-an-undecided-exit": (
        "impl.prefix = 'p'\n    impl.provisioned_then_exit(obj)",
        "impl.prefix = 'p'\n    impl.provisioned(obj)",
        set(),
        {("provisioned", "fresh")},
    ),
    "both-arms-provisioned-single-out-neither": (
        "impl.prefix = 'p'\n    impl.other = 1\n    impl.both_prepared(obj)",
        "impl.prefix = 'p'\n    impl.both_prepared(obj)",
        set(),
        {("both_prepared", "fresh")},
    ),
    # a guard on a field the stub lacks was added after the test: its path goes past it
    "guard-on-a-missing-field": (
        "impl.invalid = set()\n    impl.new_guard(obj)",
        "impl.new_guard(obj)",
        set(),
        {("new_guard", "invalid"), ("new_guard", "after")},
    ),
    "operand-after-a-missing-field": (
        "impl.owns = obj\n    impl.either()",
        "impl.either()",
        set(),
        {("either", "owns"), ("either", "epoch")},
    ),
    "array-length": (
        "impl.sized(torch.zeros(0, 4))",
        "impl.sized(torch.tensor([3, 5]))",
        set(),
        {("sized", "table")},
    ),
    "cancellable-task": (
        "asyncio.create_task(impl.task())",
        "asyncio.run(impl.task())",
        set(),
        {("task", "after")},
    ),
}


@pytest.mark.parametrize("case", sorted(SELECTED_CASES))
def test_what_the_test_states_selects_the_path(tmp_path, case):
    quiet, loud, quiet_missing, loud_missing = SELECTED_CASES[case]
    header = """
        import asyncio
        from types import SimpleNamespace
        from unittest.mock import Mock
        import pytest
        import torch
        import vllm.mod as mod
        from vllm.mod import Impl, Kind

        class Meta:
            def __init__(self, num_tokens):
                self.num_tokens = num_tokens

        class Stop(Exception):
            pass
    """
    body = "\ndef test_it(monkeypatch, obj):\n    impl = object.__new__(Impl)\n    {}\n"
    for sub, code, expected in (("q", quiet, quiet_missing), ("l", loud, loud_missing)):
        test = textwrap.dedent(header) + body.format(code)
        result = audit(tmp_path / sub, SELECTED, test)
        assert missing(result) == expected, (sub, result.findings)
    assert result.errors  # the loud input fails the audit


def test_undecided_read_is_a_note_outside_the_exit_status(tmp_path):
    result = audit(
        tmp_path,
        SELECTED,
        """
        from vllm.mod import Impl

        def test_it(obj):
            impl = object.__new__(Impl)
            impl.main = 1
            impl.branchy(obj)
        """,
    )
    assert possible(result) == {("branchy", "guarded")}
    assert result.errors == ()


RECALL_SOURCE = """
    class Real:
        def run(self):
            return self.needed

    Alias = Real
"""


@pytest.mark.parametrize(
    "test, expected",
    [
        # a fixture builds the stub, the test receives it by parameter name
        (
            """
            import pytest
            from vllm.mod import Real

            @pytest.fixture
            def stub():
                s = object.__new__(Real)
                yield s

            def test_it(stub):
                stub.run()
            """,
            {("run", "needed")},
        ),
        (
            """
            import pytest
            from vllm.mod import Real

            @pytest.fixture
            def stub():
                s = object.__new__(Real)
                s.needed = 1
                return s

            def test_it(stub):
                stub.run()
            """,
            set(),
        ),
        # a module-level alias of a vLLM class
        (
            """
            from vllm.mod import Alias

            def test_it():
                s = object.__new__(Alias)
                s.run()
            """,
            {("run", "needed")},
        ),
        # ``cls`` in a classmethod of a test subclass
        (
            """
            from vllm.mod import Real

            class Sub(Real):
                @classmethod
                def fresh(cls):
                    return object.__new__(cls)

            def test_it():
                s = Sub.fresh()
                s.run()
            """,
            {("run", "needed")},
        ),
    ],
    ids=["fixture", "fixture-complete", "module-alias", "cls-in-classmethod"],
)
def test_stub_shapes_resolved_and_followed(tmp_path, test, expected):
    result = audit(tmp_path, RECALL_SOURCE, test)
    assert missing(result) == expected
    kinds = {f.kind for f in result.findings}
    assert FindingKind.UNRESOLVED_STUB not in kinds


def test_monkeypatch_setattr_needs_the_name_on_the_class(tmp_path):
    result = audit(
        tmp_path,
        "class Real:\n    def _generate_drafts(self):\n        return 1\n",
        """
        from unittest.mock import Mock
        from vllm.mod import Real

        def test_it(monkeypatch):
            s = object.__new__(Real)
            monkeypatch.setattr(s, "_generate_draft", Mock())
            monkeypatch.setattr(s, "_generate_drafts", Mock())
            monkeypatch.setattr(s, "_other", Mock(), raising=False)
        """,
    )
    assert [(f.kind, f.name) for f in result.errors] == [
        (FindingKind.MISSING_METHOD, "_generate_draft")
    ]
    assert "_generate_drafts" in result.errors[0].message  # did you mean


def test_unresolved_stub_is_listed_with_its_reason(tmp_path):
    result = audit(
        tmp_path,
        RECALL_SOURCE,
        """
        import torch

        def test_it(kind):
            a = object.__new__(torch.nn.Linear)
            b = object.__new__(kind())
        """,
    )
    notes = sorted(f.vllm_side for f in result.findings if f.kind is FindingKind.UNRESOLVED_STUB)
    assert notes == [
        "a dynamic expression, or a class defined inside a function",
        "outside the vLLM source: torch.nn.Linear",
    ]
    assert result.errors == ()


CLASSMETHOD_SOURCE = """
    class Base:
        def run(self):
            return self.needed

        def report(self):
            return self.summary

    class Real(Base):
        def step(self):
            return self.counter
"""


@pytest.mark.parametrize(
    "test, expected",
    [
        # ``Sub.fresh()`` builds the stub; the caller's calls are the stub's
        (
            """
            from vllm.mod import Real

            class Sub(Real):
                @classmethod
                def fresh(cls):
                    w = object.__new__(cls)
                    w.counter = 0
                    return w

            def test_it():
                w = Sub.fresh()
                w.step()
                w.run()
            """,
            {("Sub", "run", "needed")},
        ),
        # the test subclass's own override comes first in the MRO: it reads nothing missing
        (
            """
            from vllm.mod import Real

            class Sub(Real):
                @classmethod
                def fresh(cls):
                    return object.__new__(cls)

                def run(self):
                    return 1

            def test_it():
                Sub.fresh().run()
            """,
            set(),
        ),
        # called on a subclass of the defining class: that subclass is the stub's class
        (
            """
            from vllm.mod import Base

            class Maker(Base):
                @classmethod
                def fresh(cls):
                    return object.__new__(cls)

            class Quiet(Maker):
                def report(self):
                    return 0

            def test_quiet():
                Quiet.fresh().report()

            def test_loud():
                Maker.fresh().report()
            """,
            {("Maker", "report", "summary")},
        ),
        # a test class's helper method returns the stub (with a second value) to ``self.h()``
        (
            """
            from vllm.mod import Real

            class TestReal:
                def _worker(self):
                    w = object.__new__(Real)
                    return w, []

                @staticmethod
                def _ready():
                    w = object.__new__(Real)
                    w.counter = 1
                    return w

                def test_step(self):
                    w, calls = self._worker()
                    w.step()

                def test_ready(self):
                    w = self._ready()
                    w.step()
            """,
            {("Real", "step", "counter")},
        ),
        # the base's method patched by position in the MRO is not followed
        (
            """
            from unittest.mock import patch
            from vllm.mod import Real

            def test_it():
                w = object.__new__(Real)
                with patch.object(Real.__mro__[1], "run", return_value=1):
                    w.run()
                w.report()
            """,
            {("Real", "report", "summary")},
        ),
    ],
    ids=["classmethod", "own-override", "named-subclass", "test-class-helper", "mro-patch"],
)
def test_stubs_built_by_methods_are_followed_into_their_callers(tmp_path, test, expected):
    """``object.__new__(cls)`` in a classmethod and helpers that are methods of a test class
    (0.33.0's ``_StubWriterWorker.fresh``, whose callers 0.34.0 broke: the judge's two
    misses): the caller's calls are audited on the class the call names."""
    result = audit(tmp_path, CLASSMETHOD_SOURCE, test)
    found = {(f.class_name, f.method, f.name) for f in result.errors}
    assert found == expected
    assert FindingKind.UNRESOLVED_STUB not in {f.kind for f in result.findings}


COPY_SOURCE = """
    class Worker:
        def copy(self, copies):
            if not copies:
                return
            if self.is_writer:
                return len(copies)
"""


@pytest.mark.parametrize(
    "test, expected",
    [
        # each case of a parametrized test is followed with its values: only the case that
        # passes copies reads the missing field, and the finding names those cases
        (
            """
            import pytest
            from vllm.mod import Worker

            @pytest.mark.parametrize("rank", [0, 1])
            @pytest.mark.parametrize("has_copies", [False, True])
            def test_copy(has_copies, rank):
                w = object.__new__(Worker)
                copies = [rank] if has_copies else []
                w.copy(copies)
            """,
            {("copy", "is_writer", ("test_copy[True-0]", "test_copy[True-1]"))},
        ),
        # no case passes copies: nothing is read
        (
            """
            import pytest
            from vllm.mod import Worker

            @pytest.mark.parametrize("copies", [[], ()], ids=["list", "tuple"])
            def test_copy(copies):
                w = object.__new__(Worker)
                w.copy(copies)
            """,
            set(),
        ),
        # a test class's test, one case through ``pytest.param(..., id=...)``
        (
            """
            import pytest
            from vllm.mod import Worker

            class TestWorker:
                @pytest.mark.parametrize(
                    "copies", [pytest.param([], id="none"), pytest.param([1], id="one")]
                )
                def test_copy(self, copies):
                    w = object.__new__(Worker)
                    w.copy(copies)
            """,
            {("copy", "is_writer", ("TestWorker::test_copy[one]",))},
        ),
    ],
    ids=["two-decorators", "all-quiet", "pytest-param"],
)
def test_parametrized_cases_are_followed_one_by_one(tmp_path, test, expected):
    """0.33.0's ``test_hisparse_host_copy_waits_for_writes_on_writer_only``: its passing
    ``has_copies=False`` cases never read ``is_host_writer``, its failing ones do; the error
    names the failing cases so that running the tests can confirm it (the judge's one false
    alarm)."""
    result = audit(tmp_path, COPY_SOURCE, test)
    assert {(f.method, f.name, f.tests) for f in result.errors} == expected


UNBOUND_SOURCE = """
    class Base:
        def start(self, n):
            return self.active + n

    class Worker(Base):
        @staticmethod
        def process(self, outputs):
            return self.inflight

    class Other:
        def start(self, n):
            return self.elsewhere
"""


@pytest.mark.parametrize(
    "test, expected",
    [
        # ``Worker.start(stub, 1)``: the stub is ``self``, the call's other arguments bind
        (
            """
            from vllm.mod import Worker

            def test_it():
                w = object.__new__(Worker)
                Worker.start(w, 1)
            """,
            {("Worker", "start", "active")},
        ),
        # through a module-level alias of the unbound method, named by a base class
        (
            """
            from vllm.mod import Base, Worker

            _real_start = Base.start

            def test_it():
                w = object.__new__(Worker)
                _real_start(w, 1)
            """,
            {("Worker", "start", "active")},
        ),
        # a staticmethod that calls its first parameter ``self``, and another class's method
        # given the stub (duck typing): neither runs the stub's own method
        (
            """
            from vllm.mod import Other, Worker

            def test_it():
                w = object.__new__(Worker)
                Worker.process(w, [])
                Other.start(w, 1)
            """,
            set(),
        ),
        # too many arguments once the stub is ``self``
        (
            """
            from vllm.mod import Worker

            def test_it():
                w = object.__new__(Worker)
                w.active = 0
                Worker.start(w, 1, 2)
            """,
            {("Worker", "start", "too-many-positional")},
        ),
    ],
    ids=["class-method", "module-alias", "not-its-method", "signature"],
)
def test_unbound_method_calls_on_the_stub_are_its_calls(tmp_path, test, expected):
    """0.33.0's ``Worker.start_weight_update(worker)`` (``test_gpu_worker_weight_transfer``):
    0.34.0 made the method read three new fields, and the stub's only calls were unbound."""
    result = audit(tmp_path, UNBOUND_SOURCE, test)
    found = {
        (
            f.class_name,
            f.method,
            f.name if f.kind is FindingKind.MISSING_ATTRIBUTE else f.kind.value,
        )
        for f in result.errors
    }
    assert found == expected


@pytest.mark.parametrize(
    "helpers, expected",
    [
        # a helper of tests/unit/utils.py returns the stub; a test module imports and uses it
        ("utils.py", {("run", "needed")}),
        # the same helper in a test module: its own tests use it, other modules do not
        ("test_helpers.py", set()),
    ],
)
def test_stub_returned_by_a_shared_helper_is_followed_into_importers(tmp_path, helpers, expected):
    """0.28.0's ``tests/v1/kv_connector/unit/utils.py:make_nixl_scheduler``: the tests that
    call the stub's methods import the helper from another module."""
    root = tmp_path / "src"
    (root / "vllm").mkdir(parents=True)
    (root / "vllm" / "__init__.py").write_text("")
    (root / "vllm" / "mod.py").write_text(textwrap.dedent(RECALL_SOURCE))
    unit = root / "tests" / "unit"
    unit.mkdir(parents=True)
    (root / "tests" / "__init__.py").write_text("")
    (unit / "__init__.py").write_text("")
    (unit / helpers).write_text(
        textwrap.dedent(
            """
            from vllm.mod import Real

            def make_real():
                s = object.__new__(Real)
                return s
            """
        )
    )
    module = helpers.removesuffix(".py")
    (unit / "test_use.py").write_text(
        textwrap.dedent(
            f"""
            from .{module} import make_real

            def test_it():
                make_real().run()
            """
        )
    )
    result = StubAuditor(root).audit_paths([root / "tests"])
    assert missing(result) == expected


def test_getattr_call_with_a_parametrized_method_name(tmp_path):
    """0.29.0's ``getattr(speculator, method_name)(...)`` over a parametrized list of method
    names: each case calls the method it names; an enum value leaves the case id unknown, so
    the finding names the test without a case."""
    result = audit(
        tmp_path,
        """
        class Spec:
            def one(self):
                return self.first

            def two(self):
                return 2
        """,
        """
        import pytest
        from vllm.mod import Spec

        @pytest.mark.parametrize("name, mode", [("one", Mode.A), ("two", Mode.B)])
        def test_step(name, mode):
            s = object.__new__(Spec)
            getattr(s, name)()
            getattr(s, "two")()
            getattr(s, name)
        """,
    )
    assert {(f.method, f.name, f.tests) for f in result.errors} == {
        ("one", "first", ("test_step",))
    }


def test_stub_class_from_a_parametrize_list_is_each_case_class(tmp_path):
    """0.34.0's ``object.__new__(engine_type)`` over ``parametrize("engine_type", [A, B])``
    (unresolved before): each case is audited on its own class, and names its case."""
    result = audit(
        tmp_path,
        """
        class Plain:
            def shutdown(self):
                return self.group

        class Careful:
            group = None

            def shutdown(self):
                return self.group
        """,
        """
        import pytest
        from vllm.mod import Careful, Plain

        @pytest.mark.parametrize("engine_type", [Plain, Careful], ids=["plain", "careful"])
        def test_shutdown(engine_type):
            engine = object.__new__(engine_type)
            engine.shutdown()
        """,
    )
    assert {(f.class_name, f.name, f.tests) for f in result.errors} == {
        ("Plain", "group", ("test_shutdown[plain]",))
    }
    assert FindingKind.UNRESOLVED_STUB not in {f.kind for f in result.findings}


@pytest.mark.parametrize(
    "test, expected",
    [
        # the module named by a literal
        (
            """
            import importlib

            def test_it():
                mod = importlib.import_module("vllm.mod")
                s = object.__new__(mod.Real)
                s.run()
            """,
            {("Real", "run", "needed", ("test_it",))},
        ),
        # by an f-string of a parametrize value, one stub per case
        (
            """
            import pytest
            from importlib import import_module

            @pytest.mark.parametrize("name", ["mod"])
            def test_it(name):
                s = object.__new__(import_module(f"vllm.{name}").Real)
                s.run()
            """,
            {("Real", "run", "needed", ("test_it[mod]",))},
        ),
        # a module the test does not state: listed as unresolved, no finding
        (
            """
            import importlib

            def test_it(name):
                mod = importlib.import_module(name)
                s = object.__new__(mod.Real)
                s.run()
            """,
            set(),
        ),
    ],
    ids=["literal", "parametrized-f-string", "unknown"],
)
def test_stub_class_from_import_module(tmp_path, test, expected):
    """0.34.0's ``importlib.import_module(f"vllm.models.{model}.nvidia.flashinfer_sparse")``
    and ``import_module(mtp_module).Qwen4ExpMultiTokenPredictor``."""
    result = audit(tmp_path, RECALL_SOURCE, test)
    assert {(f.class_name, f.method, f.name, f.tests) for f in result.errors} == expected
    unresolved = FindingKind.UNRESOLVED_STUB in {f.kind for f in result.findings}
    assert unresolved is (not expected)


# -- classes the test computes: registries, helper parameters, function-local classes ------

ENGINES_SOURCE = {
    "engines.py": """
        class Engine:
            def drain(self):
                return self.pending

        class Other:
            def drain(self):
                return 0
    """,
    "factory.py": """
        import importlib

        from vllm.engines import Other

        class Factory:
            _registry = {}

            @classmethod
            def register(cls, name, module_or_cls, class_name=None):
                if class_name is None:
                    cls._registry[name] = lambda: module_or_cls
                    return

                def loader():
                    return getattr(importlib.import_module(module_or_cls), class_name)

                cls._registry[name] = loader

            @classmethod
            def describe(cls, name, text):
                return text

        Factory.register("lazy", "vllm.engines", "Engine")
        Factory.register("direct", Other)
        Factory.describe("plain", Other)
        Factory.register("twice", Other)
        Factory.register("twice", "vllm.engines", "Engine")
        Factory.register("nowhere", "vllm.absent", "Engine")
    """,
}


def audit_tree(tmp_path: Path, modules: dict[str, str], test: str) -> AuditResult:
    """Audit ``test`` against a tree of the ``vllm/`` modules ``modules`` names."""
    root = tmp_path / "src"
    (root / "vllm").mkdir(parents=True)
    (root / "vllm" / "__init__.py").write_text("")
    for name, text in modules.items():
        (root / "vllm" / name).write_text(textwrap.dedent(text))
    test_file = tmp_path / "test_stub.py"
    test_file.write_text(textwrap.dedent(test))
    return StubAuditor(root).audit_paths([test_file])


def unresolved(result: AuditResult) -> list[str]:
    return sorted(f.vllm_side for f in result.findings if f.kind is FindingKind.UNRESOLVED_STUB)


@pytest.mark.parametrize(
    "key, sets, expected",
    [
        # registered as a (module, class name) pair behind a loader, called for the class
        ('Factory._registry["lazy"]()', "", {("Engine", "drain", "pending")}),
        ('Factory._registry["lazy"]()', "e.pending = []", set()),
        # registered as a class object, the loader a lambda; and without the call
        ('Factory._registry["direct"]()', "", set()),
        ('Factory._registry["lazy"]', "", {("Engine", "drain", "pending")}),
    ],
    ids=["lazy-pair", "lazy-pair-complete", "class-object", "no-call"],
)
def test_registry_entry_with_a_literal_key_is_its_registered_class(tmp_path, key, sets, expected):
    """``object.__new__(Factory._registry["nccl"]())`` (vLLM's weight-transfer tests): the
    module-level ``Factory.register("nccl", ...)`` calls of the factory's module say which
    class the literal key holds."""
    result = audit_tree(
        tmp_path,
        ENGINES_SOURCE,
        f"""
        from vllm.factory import Factory

        def test_it():
            e = object.__new__({key})
            {sets}
            e.drain()
        """,
    )
    assert {(f.class_name, f.method, f.name) for f in result.errors} == expected
    assert unresolved(result) == []


@pytest.mark.parametrize(
    "key, reason",
    [
        ("absent", "no module-level Factory.<method>('absent', ...) in vllm.factory"),
        ("twice", "registered 2 times"),
        ("nowhere", "the registration names no class here"),
        # ``describe`` does not store into ``_registry``: not a registration
        ("plain", "no module-level Factory.<method>('plain', ...) in vllm.factory"),
    ],
    ids=["absent", "twice", "no-class", "not-a-registration"],
)
def test_registry_entry_that_names_no_single_class_stays_a_note(tmp_path, key, reason):
    result = audit_tree(
        tmp_path,
        ENGINES_SOURCE,
        f"""
        from vllm.factory import Factory

        def test_it():
            e = object.__new__(Factory._registry["{key}"]())
            e.drain()
        """,
    )
    assert [r.rpartition(": ")[2] for r in unresolved(result)] == [reason]
    assert result.errors == ()


WORKERS_SOURCE = """
    class Pull:
        def register(self):
            return self.pull_only

    class Push(Pull):
        def register(self):
            return self.push_only
"""


@pytest.mark.parametrize(
    "test, expected",
    [
        # the helper's parameter is the class: each caller's class, positional or keyword
        (
            """
            from vllm.mod import Pull, Push

            def _make(worker_cls, ready=False):
                w = object.__new__(worker_cls)
                w.pull_only = 1
                return w

            def test_pull():
                _make(Pull).register()

            def test_push():
                _make(worker_cls=Push, ready=True).register()
            """,
            {("Push", "register", "push_only", ("test_push",))},
        ),
        # a local name chosen by a flag the callers pass (a parametrize value, or the default)
        (
            """
            import pytest
            from vllm.mod import Pull

            def _make(*, push=False):
                from vllm.mod import Push

                cls = Push if push else Pull
                w = object.__new__(cls)
                w.pull_only = 1
                return w

            @pytest.mark.parametrize("push", [False, True])
            def test_it(push):
                _make(push=push).register()

            def test_default():
                _make().register()
            """,
            {("Push", "register", "push_only", ("test_it[True]",))},
        ),
        # the helper takes the module, the caller imports it inside the test
        (
            """
            def _make(mod):
                w = object.__new__(mod.Push)
                w.pull_only = 1
                return w

            def test_it():
                from vllm import mod as m

                _make(m).register()
            """,
            {("Push", "register", "push_only", ("test_it",))},
        ),
        # ``getattr(module, name)`` with the names a parametrize list states
        (
            """
            import importlib
            import pytest

            @pytest.mark.parametrize("name", ["Pull", "Push"])
            def test_it(name):
                w = object.__new__(getattr(importlib.import_module("vllm.mod"), name))
                w.pull_only = 1
                w.register()
            """,
            {("Push", "register", "push_only", ("test_it[Push]",))},
        ),
        # decorators that multiply into too many cases: the one listing the classes counts
        (
            """
            import pytest
            from vllm.mod import Pull, Push

            @pytest.mark.parametrize("n", [0, 1, 2, 3, 4, 5, 6, 7, 8])
            @pytest.mark.parametrize("worker_cls", [Pull, Push])
            def test_it(worker_cls, n):
                w = object.__new__(worker_cls)
                w.pull_only = n
                w.register()
            """,
            {("Push", "register", "push_only", ("test_it",))},
        ),
    ],
    ids=[
        "parameter",
        "flag-of-the-caller",
        "module-parameter",
        "getattr-of-module",
        "too-many-cases",
    ],
)
def test_class_chosen_by_the_caller_is_each_callers_class(tmp_path, test, expected):
    """``object.__new__(worker_cls)`` in a helper (vLLM's ``_register_overlaid_mla_worker``):
    each same-module call of the helper binds its parameters, and the stub is audited on the
    class that call chooses, with that caller's calls."""
    result = audit(tmp_path, WORKERS_SOURCE, test)
    found = {(f.class_name, f.method, f.name, f.tests) for f in result.errors}
    assert found == expected
    assert unresolved(result) == []


def test_class_no_caller_or_value_settles_stays_a_note(tmp_path):
    result = audit(
        tmp_path,
        WORKERS_SOURCE,
        """
        from vllm.mod import Pull, Push

        def _make(worker_cls):
            return object.__new__(worker_cls)

        def test_unknown(pick):
            _make(pick()).register()

        def test_undecided(flag):
            w = object.__new__(Push if flag() else Pull)
            w.register()
        """,
    )
    assert unresolved(result) == [
        "the class Push if flag() else Pull is computed in test_undecided() from values that "
        "no parametrize case or same-module call of it settles",
        "the class worker_cls is computed in _make() from values that no parametrize case or "
        "same-module call of it settles",
    ]
    assert result.errors == ()


def test_class_defined_in_the_test_function_is_a_test_subclass(tmp_path):
    """``class StubSpeculator(DraftModelSpeculator)`` inside a test (vLLM's watermarking
    tests): its own overrides first, then the vLLM bases; two such classes of one name in
    one module stay two classes."""
    result = audit(
        tmp_path,
        WORKERS_SOURCE,
        """
        from vllm.mod import Pull

        def test_inherits():
            class Stub(Pull):
                def other(self): ...

            s = object.__new__(Stub)
            s.register()

        def test_overrides():
            class Stub(Pull):
                def register(self):
                    return 0

            s = object.__new__(Stub)
            s.register()

        class TestLocal:
            def test_local_import(self):
                from vllm.mod import Push

                class Stub(Push):
                    pass

                s = object.__new__(Stub)
                s.pull_only = 1
                s.register()
        """,
    )
    found = sorted((f.class_name, f.name, f.tests) for f in result.errors)
    assert found == [
        ("Stub", "pull_only", ("test_inherits",)),
        ("Stub", "push_only", ("TestLocal::test_local_import",)),
    ]
    assert unresolved(result) == []
