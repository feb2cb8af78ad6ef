"""Which samples each rank reads at each step: deterministic, resumable, independent of world size.

The data position is one number, the count of samples the whole job has consumed. Step by step
the job reads samples samplesSeen, samplesSeen+1, ... in a fixed order, split into micro-batches
per rank, so a run resumed at another world size reads exactly the samples an uninterrupted
run would have read next. Pure.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import numpy as np


@dataclass(frozen=True)
class BatchPlan:
    micro_batch_size: int
    accum_steps: int
    world_size: int

    @property
    def global_batch(self) -> int:
        return self.micro_batch_size * self.accum_steps * self.world_size

    def indices(self, samples_seen: int, rank: int, micro_step: int) -> range:
        """Global sample indices of one rank's micro-batch in the step that starts at samples_seen."""
        start = samples_seen + (micro_step * self.world_size + rank) * self.micro_batch_size
        return range(start, start + self.micro_batch_size)


def batch_plan(
    micro_batch_size: int, grad_accum_steps: int, global_batch_size: Optional[int], world_size: int
) -> BatchPlan:
    """The plan for this world size; with a global batch size, accumulation makes up the rest.

    Raises ValueError (naming globalBatchSize) when the global batch cannot be split evenly.
    """
    if global_batch_size is None:
        return BatchPlan(micro_batch_size, grad_accum_steps, world_size)
    per_micro_step = micro_batch_size * world_size
    if global_batch_size % per_micro_step:
        raise ValueError(
            f"must be a multiple of microBatchSize x world size ({micro_batch_size} x {world_size} = {per_micro_step})"
        )
    return BatchPlan(micro_batch_size, global_batch_size // per_micro_step, world_size)


class EpochOrder:
    """Sample index -> item index: a seeded permutation of the items per epoch."""

    def __init__(self, items: int, seed: int):
        self.items = items
        self.seed = seed
        self._epoch = -1
        self._perm: Optional[np.ndarray] = None

    def __call__(self, sample: int) -> int:
        epoch, offset = divmod(sample, self.items)
        if epoch != self._epoch:
            self._perm = np.random.default_rng([self.seed, epoch]).permutation(self.items)
            self._epoch = epoch
        assert self._perm is not None  # set with _epoch, on the first call
        return int(self._perm[offset])
