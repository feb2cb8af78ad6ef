"""Distributed checkpoints with torch.distributed.checkpoint (DCP): save, rotate, resume.

Each rank writes its own shards; DCP reshards on load, so a job resumes at any world size.
What is saved: model and optimizer (sharded), and one small replicated record of the trainer
(step, data position, scheduler, RNG).
"""

from __future__ import annotations

import io
import shutil
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional

import torch
import torch.distributed as dist
import torch.distributed.checkpoint as dcp
from torch.distributed.checkpoint.api import CheckpointException
from torch.distributed.checkpoint.state_dict import get_state_dict, set_state_dict

from pinery_trainer import checkpoint_layout as layout
from pinery_trainer.distributed import Runtime, all_agree


@dataclass(frozen=True)
class TrainerState:
    step: int
    samples_seen: int
    scheduler: dict[str, Any]
    rng: dict[str, torch.Tensor]


@dataclass(frozen=True)
class Resumed:
    state: TrainerState
    path: Path
    seconds: float


def capture_rng() -> dict[str, torch.Tensor]:
    rng = {"cpu": torch.get_rng_state()}
    if torch.cuda.is_available():
        rng["cuda"] = torch.cuda.get_rng_state()
    return rng


def restore_rng(rng: dict[str, torch.Tensor]) -> None:
    torch.set_rng_state(rng["cpu"])
    if "cuda" in rng and torch.cuda.is_available():
        torch.cuda.set_rng_state(rng["cuda"])


def encode(state: TrainerState) -> bytes:
    buffer = io.BytesIO()
    torch.save(
        {"step": state.step, "samplesSeen": state.samples_seen, "scheduler": state.scheduler, "rng": state.rng},
        buffer,
    )
    return buffer.getvalue()


def decode(blob: bytes) -> TrainerState:
    record = torch.load(io.BytesIO(blob), weights_only=True)
    return TrainerState(record["step"], record["samplesSeen"], record["scheduler"], record["rng"])


def describe(error: BaseException) -> str:
    """One line about a failure; DCP wraps each rank's exception in a CheckpointException."""
    if isinstance(error, CheckpointException) and error.failures:
        rank, (cause, _) = sorted(error.failures.items())[0]
        return f"rank {rank}: {describe(cause)}"
    return f"{type(error).__name__}: {error}".splitlines()[0][:300]


class Checkpointer:
    def __init__(self, root: Path, keep: int, runtime: Runtime):
        self.root = root
        self.keep = keep
        self.runtime = runtime

    def save(self, model, optimizer, state: TrainerState, reason: str) -> dict[str, Any]:
        """Write the checkpoint of `state.step`; returns what rank 0 reports about it."""
        start = time.monotonic()
        path = layout.step_dir(self.root, state.step)
        if self.runtime.is_main:
            if path.exists():
                shutil.rmtree(path)
            path.mkdir(parents=True)
        dist.barrier()
        dcp.save(self._state(model, optimizer, encode(state)), checkpoint_id=str(path))
        report: dict[str, Any] = {}
        if self.runtime.is_main:
            # DCP returns once every rank's files and the metadata are written: now mark it.
            manifest = layout.build_manifest(
                path, state.step,
                {"samplesSeen": state.samples_seen, "worldSize": self.runtime.world_size, "reason": reason,
                 "createdAt": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())},
            )
            layout.write_marker(path, manifest)
            for entry in layout.to_delete(layout.scan(self.root), self.keep):
                layout.remove(entry)
            report = {"path": str(path), "bytes": sum(manifest["files"].values()), "reason": reason}
        # Nobody leaves (or exits after SIGTERM) before the marker exists.
        dist.barrier()
        report["seconds"] = round(time.monotonic() - start, 3)
        return report

    def resume(self, model, optimizer) -> tuple[Optional[Resumed], list[dict[str, Any]]]:
        """Load the newest checkpoint every rank can load; also returns the ones skipped and why.

        When nothing is loaded the model's weights are undefined (the caller initialises them)
        and the optimizer has no state.
        """
        scanned = [layout.scan(self.root) if self.runtime.is_main else None]
        # One rank decides what exists, so that every rank tries the same checkpoints.
        dist.broadcast_object_list(scanned, src=0)
        entries = scanned[0]
        assert entries is not None  # rank 0's scan, now on every rank
        skipped = [{"step": e.step, "reason": e.problem} for e in entries if not e.usable]
        for entry in layout.resume_candidates(entries):
            start = time.monotonic()
            try:
                state = self._load(entry.path, model, optimizer)
                error = None
            except (Exception, CheckpointException) as e:  # noqa: BLE001 - any failure: try an older one
                state, error = None, describe(e)
            if not all_agree(error is not None):
                assert state is not None  # no rank failed, this one included
                return Resumed(state, entry.path, round(time.monotonic() - start, 3)), skipped
            skipped.append({"step": entry.step, "reason": f"failed to load: {error or 'on another rank'}"})
        # get_state_dict gave the optimizer a zero step of state: a fresh run must not keep it.
        optimizer.state.clear()
        return None, skipped

    @staticmethod
    def _state(model, optimizer, trainer: bytes) -> dict[str, Any]:
        model_state, optim_state = get_state_dict(model, optimizer)
        # Buffers are saved too: non-persistent ones (rotary tables of Hugging Face models) are
        # not in the state dict, and after meta-device construction nothing else fills them.
        buffers = dict(model.named_buffers())
        return {"model": model_state, "optim": optim_state, "buffers": buffers, "trainer": trainer}

    def _load(self, path: Path, model, optimizer) -> TrainerState:
        state = self._state(model, optimizer, b"")
        dcp.load(state, checkpoint_id=str(path))
        set_state_dict(model, optimizer, model_state_dict=state["model"], optim_state_dict=state["optim"])
        return decode(state["trainer"])
