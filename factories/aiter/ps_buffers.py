"""The six ``get_ps_metadata_v1`` buffers as data: shape formula, dtype, and where each lives.

Written from AITER's documented sizing (``get_ps_metadata_info_v1``, aiter/ops/attention.py at
e4048607a5), independently of the emulation's code, so a contract can pin the emulation, the
live function where it exists, what vLLM's builder allocates, and what it hands the impl,
against one table. ``reduce_partial_map``'s length is the one entry that depends on the contract
revision (ROCm/aiter#3606 changed ``max_partials``; contract §8.2).
"""

from __future__ import annotations

import enum
import math
from collections.abc import Callable

import attrs
import torch

from factories.aiter.revision import AiterContract, current_contract
from factories.analysis.findings import Problem


@attrs.frozen
class PsDims:
    """The inputs of the sizing formula; ``contract`` None means the revision in force."""

    batch: int
    heads: int
    max_qlen: int
    qlen_granularity: int
    cu: int
    contract: AiterContract | None = None

    @property
    def clusters(self) -> int:
        return math.gcd(self.heads, self.cu)

    @property
    def cus_per_cluster(self) -> int:
        return self.cu // self.clusters

    @property
    def q_tiles_per_batch(self) -> int:
        return -(-self.max_qlen // self.qlen_granularity)

    @property
    def q_tiles(self) -> int:
        return self.batch * self.q_tiles_per_batch

    @property
    def max_works(self) -> int:
        return (self.batch + self.cus_per_cluster - 1) * self.q_tiles_per_batch * self.heads

    @property
    def max_partials(self) -> int:
        cpc = self.cus_per_cluster
        contract = current_contract() if self.contract is None else self.contract
        if contract is AiterContract.PRE_3606:
            return min(self.batch + cpc - 1, 2 * (cpc - 1)) * self.q_tiles_per_batch
        return self.q_tiles + cpc - 1


@attrs.frozen
class PsBuffer:
    """One planner buffer: AITER's name, vLLM's builder attribute and metadata field."""

    name: str
    builder_attr: str
    metadata_field: str | None
    dtype: torch.dtype
    shape: Callable[[PsDims], tuple[int, ...]] = attrs.field(eq=False)
    planner_writes: bool = True

    def expected_shape(self, dims: PsDims) -> tuple[int, ...]:
        return self.shape(dims)

    def layout_problem(
        self, where: str, tensor: torch.Tensor, dims: PsDims, device_type: str
    ) -> Problem | None:
        """A ``LAYOUT`` problem when ``tensor`` (this buffer as it lives at ``where``: the
        device, a staging slot) differs from the table in shape, dtype or device, else None."""
        got = (tuple(tensor.shape), tensor.dtype, tensor.device.type)
        want = (self.expected_shape(dims), self.dtype, device_type)
        if got == want:
            return None
        return Problem(TableRule.LAYOUT, f"{where} {self.name}", f"{got} != {want}")


class TableRule(enum.Enum):
    """What a builder must do with the table's buffers; the kinds of its ``Problem``s."""

    LAYOUT = "layout"  # shape, dtype and device as the table says
    PLANNER_OUTPUTS = "planner-outputs"  # the planner fills the device buffers, in table order
    PINNED = "pinned"  # staging is pinned (an unpinned async copy is a silent sync)
    ATTACHED = "attached"  # the metadata carries the builder's own buffers, not copies


PS_BUFFERS: tuple[PsBuffer, ...] = (
    PsBuffer(
        "work_metadata_ptrs",
        "fp8_ps_work_metadata",
        None,
        torch.uint64,
        lambda d: (2,),
        planner_writes=False,
    ),
    PsBuffer(
        "work_indptr",
        "fp8_ps_work_indptr",
        "fp8_prefill_work_indptr",
        torch.int32,
        lambda d: (d.cu + 1,),
    ),
    PsBuffer(
        "work_info",
        "fp8_ps_work_info",
        "fp8_prefill_work_info_set",
        torch.int32,
        lambda d: (d.max_works, 8),
    ),
    PsBuffer(
        "reduce_indptr",
        "fp8_ps_reduce_indptr",
        "fp8_prefill_reduce_indptr",
        torch.int32,
        lambda d: (d.q_tiles + 1,),
    ),
    PsBuffer(
        "reduce_final_map",
        "fp8_ps_reduce_final_map",
        "fp8_prefill_reduce_final_map",
        torch.int32,
        lambda d: (d.q_tiles, 2),
    ),
    PsBuffer(
        "reduce_partial_map",
        "fp8_ps_reduce_partial_map",
        "fp8_prefill_reduce_partial_map",
        torch.int32,
        lambda d: (d.max_partials,),
    ),
)


def as_shape(size: int | tuple[int, ...] | list[int] | torch.Size) -> tuple[int, ...]:
    """AITER returns 1-D sizes as ints and 2-D ones as tuples; compare as tuples."""
    return (int(size),) if isinstance(size, int) else tuple(int(s) for s in size)
