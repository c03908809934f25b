"""Buffer layouts shared by the emulated planner, kernels and the plan validator.

Why a module of its own: the planner writes ``work_info`` rows, the emulated kernel reads them and
the validator checks them. If each of them spelled the column numbers, the 256-row partial slot or
the sizing formulas separately, a typo in one would make the emulation agree with itself while
disagreeing with AITER. Everything here is transcribed from the contract
(``aiter-ps-contract.md`` §1, §2.2, §3.3, §3.4) and from ``csrc/include/ps.h``.
"""

from __future__ import annotations

import enum
import math

import attrs

from factories.aiter.revision import AiterContract, current_contract

#: AITER's four PS-prefill functions by role: buffer sizing, planner, prefill kernel, reduce.
PLAN_INFO_FUNCTION = "get_ps_metadata_info_v1"
PLAN_FUNCTION = "get_ps_metadata_v1"
PREFILL_KERNEL = "mla_prefill_ps_asm_fwd"
REDUCE_KERNEL = "mla_reduce_v1"

#: AITER's four PS-prefill functions: the surface vLLM calls and the emulation provides.
AITER_FUNCTIONS = (PLAN_INFO_FUNCTION, PLAN_FUNCTION, PREFILL_KERNEL, REDUCE_KERNEL)

#: Rows of one q tile of the gfx950 ``mla_pfl_qh192_vh128_m32x8_n128x1`` kernel (32x8). The kernel
#: writes all of them into a partial slot, so partial slots must be exactly this far apart.
KERNEL_TILE_ROWS = 256

#: kv tokens per step of the kernel's inner loop (the ``n128`` in the kernel name).
KERNEL_KV_STEP = 128

#: Head dims of the only PS prefill kernel that exists (``qh192_vh128``).
QK_HEAD_DIM = 192
V_HEAD_DIM = 128

#: int32 columns per ``work_info`` row (``kSizeWorkInfoInDw``) and per ``reduce_final_map`` row.
WORK_INFO_COLS = 8
FINAL_MAP_COLS = 2


class WorkInfoCol(enum.IntEnum):
    """Column meaning of one ``work_info`` row (``union WorkInfo`` in ``ps.h``)."""

    BATCH_IDX = 0
    PARTIAL_O_LOC = 1  # -1: unsplit, final bf16 output; >= 0: ROW offset into splitData/splitLse
    QO_START = 2  # global packed q row, inclusive
    QO_END = 3  # global packed q row, exclusive
    KV_START = 4  # global index into kv_page_indices
    KV_END = 5  # exclusive, clamped to pages_kv_indptr[b+1]
    KV_OFFSET = 6  # written by the planner, never read by the kernel
    Q_HEAD_RANGE = 7  # pack_dword(low=kh*qhg, high=(kh+1)*qhg); the kernel uses only the low half


def pack_dword(low: int, high: int) -> int:
    """``pack_dword`` of ``ps.h`` on int32: ``(high << 16) | (low & 0xFFFF)``, wrapped to int32."""
    value = ((high << 16) | (low & 0xFFFF)) & 0xFFFFFFFF
    return value - (1 << 32) if value >= (1 << 31) else value


@attrs.frozen
class PsMetadataSizes:
    """The numbers behind ``get_ps_metadata_info_v1`` (contract §1, attention.py:1004-1044;
    §8 for the revision after ROCm/aiter#3606).

    Kept as a value object so that the info function and the validator use one formula; the
    validator must check a plan against exactly the sizes a caller would have allocated.
    ``max_partials`` is the one number the revisions disagree on.
    """

    cu_count: int
    num_clusters: int
    cus_per_cluster: int
    max_qo_tiles_per_batch: int
    qo_tile_cnt: int
    max_works: int
    max_partials: int

    @classmethod
    def compute(
        cls,
        batch_size: int,
        num_head_k: int,
        max_qlen: int,
        qlen_granularity: int,
        cu_count: int,
        contract: AiterContract | None = None,
    ) -> PsMetadataSizes:
        """``contract`` None: the revision in force (:func:`current_contract`)."""
        contract = current_contract() if contract is None else contract
        num_clusters = math.gcd(num_head_k, cu_count)
        cus_per_cluster = cu_count // num_clusters
        # Python's math.ceil on a float, exactly as the stub does.
        max_qo_split_per_batch = math.ceil(max_qlen / qlen_granularity)
        qo_tile_cnt = batch_size * max_qo_split_per_batch
        max_works = (batch_size + cus_per_cluster - 1) * max_qo_split_per_batch * num_head_k
        if contract is AiterContract.PRE_3606:
            max_partials = (
                min(batch_size + cus_per_cluster - 1, (cus_per_cluster - 1) * 2)
                * max_qo_split_per_batch
            )
        else:
            # Every tile may take a slot (need_lse=True), plus one more per split boundary,
            # of which a cluster has at most cus_per_cluster - 1 (contract §8.2).
            max_partials = qo_tile_cnt + cus_per_cluster - 1
        return cls(
            cu_count=cu_count,
            num_clusters=num_clusters,
            cus_per_cluster=cus_per_cluster,
            max_qo_tiles_per_batch=max_qo_split_per_batch,
            qo_tile_cnt=qo_tile_cnt,
            max_works=max_works,
            max_partials=max_partials,
        )

    @property
    def work_indptr_len(self) -> int:
        return self.cu_count + 1

    @property
    def reduce_indptr_len(self) -> int:
        return self.qo_tile_cnt + 1

    @property
    def partial_rows(self) -> int:
        """Rows of splitData/splitLse that ``mla_prefill_ps_fwd`` allocates (mla.py:1216-1224)."""
        return self.max_partials * KERNEL_TILE_ROWS


def c_div(a: int, b: int) -> int:
    """C integer division (truncates toward zero), as ``int32_t / int32_t`` in the C++.

    It matters: ``integer_divide_ceil(eff, g) = (eff + g - 1) / g`` is negative for ``eff <= -g``
    (causal with kv_len < q_len), and Python's ``//`` would floor instead.
    """
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b > 0) else -q


def c_mod(a: int, b: int) -> int:
    """C ``%``: the sign follows the dividend."""
    return a - b * c_div(a, b)


@attrs.frozen
class PlannerSettings:
    """The planner's keyword settings. Defaults are the Python stub's (``attention.py:1060-1064``).

    Neither these defaults nor the pybind ones (kvlen 1, block 1) suit the fp8 kernel; use
    :meth:`for_fp8_prefill_kernel` (1 / 256 / 128 / 1, what ``op_tests/test_mla_prefill_ps.py``
    uses).
    """

    qhead_granularity: int = 1
    qlen_granularity: int = 256
    kvlen_granularity: int = 16
    block_size: int = 16
    is_causal: bool = True

    @classmethod
    def for_fp8_prefill_kernel(cls, is_causal: bool = True) -> PlannerSettings:
        return cls(
            qhead_granularity=1,
            qlen_granularity=256,
            kvlen_granularity=128,
            block_size=1,
            is_causal=is_causal,
        )

    def check(self) -> None:
        """Raise for settings the real planner rejects or cannot run with.

        The C++ checks that ``kvlen_granularity`` is a power of 2 (``AITER_CHECK``) and asserts
        ``kvlen_granularity % block_size == 0``. Zero or negative granularities are rejected too:
        the C++ would divide by zero or loop forever.
        """
        for name in ("qhead_granularity", "qlen_granularity", "kvlen_granularity", "block_size"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(
                    f"get_ps_metadata_v1: {name} must be a positive int, got {value!r}"
                )
        kvg = self.kvlen_granularity
        if kvg & (kvg - 1):
            raise ValueError(
                f"get_ps_metadata_v1: kvlen_granlarity Must be power of 2! (got {kvg})"
            )
        if kvg % self.block_size:
            raise ValueError(
                "get_ps_metadata_v1: kvlen_granularity % block_size must be 0 "
                f"(got {kvg} % {self.block_size})"
            )
