"""What the trainer prints: JSON event lines for the FSDPJob operator, human logs for people.

Rank 0 alone prints events, one JSON object per line on stdout, each with an `event` key
(docs/trainer.md lists them). Human-readable lines go to stderr, prefixed with the rank.

`step` and `checkpoint` are the progress protocol for any training script (docs/fsdpjob.md,
"Progress"): this file needs nothing but the standard library, so a script can import it
(`from pinery_trainer import report`) or carry a copy of it (`import report`):

    report.step(120, loss=2.31, total_steps=1000, tokens_per_second=51200, checkpoint_step=100)
    report.checkpoint(200)
"""

from __future__ import annotations

import json
import math
import os
import sys
import time
from typing import Any, Optional, TextIO

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
        if self.rank == 0:
            write_event({"event": name, **fields}, self.stream)

    def log(self, message: str) -> None:
        log(message, self.rank)


def write_event(record: dict[str, Any], stream: TextIO) -> None:
    """One JSON line, flushed at once: the operator reads the log while the job runs."""
    stream.write(json.dumps({k: clean(v) for k, v in record.items()}, separators=(",", ":")) + "\n")
    stream.flush()


def log(message: str, rank: Optional[int] = None) -> None:
    who = "pinery-trainer" if rank is None else f"pinery-trainer rank {rank}"
    stamp = time.strftime("%H:%M:%S")
    sys.stderr.write(f"{stamp} {who}: {message}\n")
    sys.stderr.flush()


# --- the progress protocol for any script -------------------------------------------------

# The keyword arguments of `step` and the keys the operator reads (pinery.fsdpjob.progress).
_STEP_KEYS = {"total_steps": "totalSteps", "loss": "loss", "tokens_per_second": "tokensPerSecond",
              "checkpoint_step": "lastCheckpointStep", "learning_rate": "learningRate"}


def _process_rank() -> int:
    """This process's global rank as torchrun sets it (RANK), 0 when run without torchrun."""
    try:
        return int(os.environ.get("RANK", "0"))
    except ValueError:
        return 0


def _emit(record: dict[str, Any], stream: Optional[TextIO]) -> bool:
    if _process_rank() != 0:
        return False  # the operator reads rank 0's log; other ranks stay quiet
    write_event(record, stream or sys.stdout)
    return True


def _check_step(step: Any) -> None:
    if isinstance(step, bool) or not isinstance(step, int) or step < 0:
        raise ValueError(f"step must be a non-negative integer, not {step!r}")


def step(step: int, *, loss: Optional[float] = None, total_steps: Optional[int] = None,
         tokens_per_second: Optional[float] = None, checkpoint_step: Optional[int] = None,
         learning_rate: Optional[float] = None, stream: Optional[TextIO] = None, **extra: Any) -> bool:
    """Report that optimizer step `step` is done (rank 0 only; True when a line was printed).

    Keys left None are not printed; `extra` keys (camelCase, JSON values) are printed as they
    are and kept in the log for people, the operator ignoring what it does not know."""
    _check_step(step)
    given = {"total_steps": total_steps, "loss": loss, "tokens_per_second": tokens_per_second,
             "checkpoint_step": checkpoint_step, "learning_rate": learning_rate}
    record: dict[str, Any] = {"event": "progress", "step": step}
    record.update({_STEP_KEYS[k]: v for k, v in given.items() if v is not None})
    record.update(extra)
    return _emit(record, stream)


def checkpoint(step: int, *, stream: Optional[TextIO] = None, **extra: Any) -> bool:
    """Report that the checkpoint of step `step` is complete (written and durable)."""
    _check_step(step)
    return _emit({"event": "checkpoint", "step": step, **extra}, stream)
