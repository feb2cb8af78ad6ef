"""What the trainer prints: JSON event lines for the FSDPJob operator, human logs for people.

Rank 0 alone prints events, one JSON object per line on stdout, each with an `event` key
(docs/trainer.md lists them). Human-readable lines go to stderr, prefixed with the rank.
"""

from __future__ import annotations

import json
import math
import sys
import time
from typing import Any, Optional

# Peak dense bf16 TFLOP/s per GPU, matched against torch.cuda.get_device_name() in this order.
PEAK_TFLOPS = (
    ("H100 PCIe", 756.0),
    ("H100", 989.4),
    ("H200", 989.4),
    ("GH200", 989.4),
    ("B200", 2250.0),
    ("A100", 312.0),
    ("L40S", 362.0),
    ("L4", 121.0),
    ("A10G", 70.0),
)


def peak_tflops(device_name: str) -> Optional[float]:
    for marker, tflops in PEAK_TFLOPS:
        if marker in device_name:
            return tflops
    return None


def mfu(tokens_per_second: float, flops_per_token: float, devices: int, peak_tflops_per_device: Optional[float]) -> Optional[float]:
    """Model FLOPs utilisation: achieved training FLOP/s over the devices' peak."""
    if not peak_tflops_per_device or devices <= 0:
        return None
    return tokens_per_second * flops_per_token / (devices * peak_tflops_per_device * 1e12)


def clean(value: Any) -> Any:
    """JSON has no NaN or infinity: report those as null."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


class Reporter:
    def __init__(self, rank: int, stream=None):
        self.rank = rank
        self.stream = stream or sys.stdout

    def event(self, name: str, **fields: Any) -> None:
        if self.rank != 0:
            return
        record = {"event": name, **{k: clean(v) for k, v in fields.items()}}
        self.stream.write(json.dumps(record, separators=(",", ":")) + "\n")
        self.stream.flush()

    def log(self, message: str) -> None:
        log(message, self.rank)


def log(message: str, rank: Optional[int] = None) -> None:
    who = "pinery-trainer" if rank is None else f"pinery-trainer rank {rank}"
    stamp = time.strftime("%H:%M:%S")
    sys.stderr.write(f"{stamp} {who}: {message}\n")
    sys.stderr.flush()
