"""The learning-rate schedule: linear warm-up, then cosine decay to a floor. Pure."""

from __future__ import annotations

import math


def lr_factor(step: int, total_steps: int, warmup_steps: int, min_ratio: float) -> float:
    """Multiplier of the peak learning rate for optimizer step `step` (0-based)."""
    if step < warmup_steps:
        return (step + 1) / warmup_steps
    decay_steps = max(1, total_steps - warmup_steps)
    progress = min(1.0, (step - warmup_steps) / decay_steps)
    return min_ratio + (1.0 - min_ratio) * 0.5 * (1.0 + math.cos(math.pi * progress))
