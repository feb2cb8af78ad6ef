"""The training run: set up, resume, step, checkpoint, report. Returns the exit code."""

from __future__ import annotations

import time
import uuid
from pathlib import Path
from typing import Any, Optional

import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch.optim.lr_scheduler import LambdaLR

from pinery_trainer import exit_codes
from pinery_trainer.build import BuiltModel, build_model
from pinery_trainer.checkpoint import Checkpointer, Resumed, TrainerState, capture_rng, restore_rng
from pinery_trainer.config import OptimConfig, TrainerConfig
from pinery_trainer.configfile import ConfigError
from pinery_trainer.data import Dataset, batch, build_dataset, load_tokenizer
from pinery_trainer.distributed import Runtime, all_agree
from pinery_trainer.report import Reporter, mfu, peak_tflops
from pinery_trainer.sampling import BatchPlan, batch_plan
from pinery_trainer.schedule import lr_factor
from pinery_trainer.stopping import StopRequest
from pinery_trainer.tensorboard import ScalarWriter


def make_optimizer(module: torch.nn.Module, config: OptimConfig) -> torch.optim.AdamW:
    # No weight decay on gains (norm weights): the usual choice for transformers.
    decay = [p for p in module.parameters() if p.ndim >= 2]
    no_decay = [p for p in module.parameters() if p.ndim < 2]
    groups = [
        group
        for group in ({"params": decay, "weight_decay": config.weight_decay}, {"params": no_decay, "weight_decay": 0.0})
        if group["params"]
    ]
    return torch.optim.AdamW(groups, lr=config.lr, betas=(config.beta1, config.beta2), eps=config.eps, foreach=True)


def check_shared_dir(root: Path, runtime: Runtime) -> None:
    """Every rank must see the same checkpoint directory (on several nodes: a shared volume)."""
    offer: list[Optional[str]] = [None]
    if runtime.is_main:
        try:
            root.mkdir(parents=True, exist_ok=True)
            probe = root / f".probe-{uuid.uuid4().hex}"
            probe.touch()
            offer = [probe.name]
        except OSError as e:
            offer = [f"!{e.strerror or e}"]
    dist.broadcast_object_list(offer, src=0)
    name = offer[0]
    assert name is not None  # rank 0 offers a probe name or an error
    if name.startswith("!"):
        raise ConfigError([("checkpoint.dir", f"cannot write to {root}: {name[1:]}")])
    missing = all_agree(not (root / name).exists())
    if runtime.is_main:
        (root / name).unlink(missing_ok=True)
    if missing:
        raise ConfigError([("checkpoint.dir", f"{root} is not the same directory on every node: it must be a shared volume")])


class Trainer:
    def __init__(self, config: TrainerConfig, runtime: Runtime, stop: StopRequest):
        self.config = config
        self.runtime = runtime
        self.stop = stop
        self.reporter = Reporter(runtime.rank)
        try:
            self.plan: BatchPlan = batch_plan(
                config.micro_batch_size, config.grad_accum_steps, config.global_batch_size, runtime.world_size
            )
        except ValueError as e:
            raise ConfigError([("globalBatchSize", str(e))]) from None
        torch.manual_seed(config.seed)
        tokenizer = None if config.data.source == "synthetic" else load_tokenizer(config.data.tokenizer)
        self.model: BuiltModel = build_model(config, runtime, tokenizer.vocab_size if tokenizer else None)
        self.dataset: Dataset = build_dataset(
            config.data, tokenizer, self.model.vocab_size, config.model.seq_len, config.seed
        )
        self.optimizer = make_optimizer(self.model.module, config.optim)
        warmup, min_ratio = config.warmup_steps(), config.optim.min_lr_ratio
        self.scheduler = LambdaLR(self.optimizer, lambda step: lr_factor(step, config.steps, warmup, min_ratio))
        self.checkpointer: Optional[Checkpointer] = None
        if config.checkpoint.dir:
            root = Path(config.checkpoint.dir)
            check_shared_dir(root, runtime)
            self.checkpointer = Checkpointer(root, config.checkpoint.keep, runtime)
        self.step = 0
        self.samples_seen = 0
        self.last_checkpoint: Optional[int] = None
        self.loss: Optional[float] = None
        self.tokens_per_step = self.plan.global_batch * config.model.seq_len
        # TensorBoard scalars: rank 0 only, like the progress lines they repeat.
        self.scalars: Optional[ScalarWriter] = None
        if config.report.tensorboard_dir and runtime.is_main:
            self.scalars = ScalarWriter(config.report.tensorboard_dir)
        self.peak_tflops = None
        if runtime.is_cuda:
            self.peak_tflops = config.peak_tflops or peak_tflops(torch.cuda.get_device_name(runtime.device))

    # -- start -------------------------------------------------------------------------------

    def start(self) -> None:
        resumed: Optional[Resumed] = None
        skipped: list[dict[str, Any]] = []
        if self.checkpointer:
            resumed, skipped = self.checkpointer.resume(self.model.module, self.optimizer)
        if resumed:
            state = resumed.state
            self.step, self.samples_seen, self.last_checkpoint = state.step, state.samples_seen, state.step
            self.scheduler.load_state_dict(state.scheduler)
            restore_rng(state.rng)
        else:
            self.model.initialise()
        for item in skipped:
            self.reporter.log(f"skipped checkpoint of step {item['step']}: {item['reason']}")
        self.reporter.event(
            "start",
            step=self.step,
            totalSteps=self.config.steps,
            worldSize=self.runtime.world_size,
            mesh=self.runtime.mesh_plan.describe(),
            device=self.runtime.device.type,
            model=self.model.description,
            parameters=self.model.parameters,
            globalBatchSize=self.plan.global_batch,
            gradAccumSteps=self.plan.accum_steps,
            resumedFrom=resumed.state.step if resumed else None,
            resumeSeconds=resumed.seconds if resumed else None,
            skippedCheckpoints=skipped,
        )
        self.reporter.log(
            f"{f'resumed at step {self.step} from {resumed.path}' if resumed else 'starting'}: {self.model.description}, "
            f"world size {self.runtime.world_size} on {self.runtime.device.type}, "
            f"global batch {self.plan.global_batch} x {self.config.model.seq_len} tokens"
        )

    # -- the loop ----------------------------------------------------------------------------

    def run(self) -> int:
        self.start()
        started = time.monotonic()
        interval_start, interval_step = started, self.step
        while self.step < self.config.steps:
            if all_agree(self.stop.requested):
                return self.stop_for_signal()
            loss, grad_norm, lr = self.train_step()
            self.step += 1
            self.samples_seen += self.plan.global_batch
            if self.step % self.config.log_every == 0 or self.step == self.config.steps:
                self.loss = self.global_mean(loss)
                now = time.monotonic()
                tokens_per_second = (self.step - interval_step) * self.tokens_per_step / max(now - interval_start, 1e-9)
                interval_start, interval_step = now, self.step
                self.report_progress(lr, grad_norm.item(), tokens_per_second, now - started)
            if self.checkpointer and self.step % self.config.checkpoint.interval_steps == 0:
                self.save("interval")
        if self.checkpointer and self.last_checkpoint != self.step:
            self.save("final")
        elapsed = time.monotonic() - started
        self.reporter.event(
            "done",
            step=self.step,
            totalSteps=self.config.steps,
            loss=self.loss,
            lastCheckpointStep=self.last_checkpoint,
            elapsedSeconds=round(elapsed, 3),
        )
        self.reporter.log(
            f"finished step {self.step} of {self.config.steps}; world size {self.runtime.world_size}; loss {self.loss}"
        )
        return exit_codes.OK

    def train_step(self) -> tuple[torch.Tensor, torch.Tensor, float]:
        """One optimizer step; loss and gradient norm stay on the device (no sync per step)."""
        model, device = self.model, self.runtime.device
        lr = self.optimizer.param_groups[0]["lr"]
        total = torch.zeros((), device=device)
        for micro in range(self.plan.accum_steps):
            indices = self.plan.indices(self.samples_seen, self.runtime.rank, micro)
            tokens = torch.from_numpy(batch(self.dataset, indices)).to(device, non_blocking=True)
            logits = model.logits(tokens[:, :-1])
            # Every rank holds the same number of tokens, so the mean over local tokens divided
            # by the accumulation steps, averaged by FSDP over ranks, is the global mean.
            loss = F.cross_entropy(logits.float().reshape(-1, logits.shape[-1]), tokens[:, 1:].reshape(-1))
            loss = loss / self.plan.accum_steps
            loss.backward()
            total += loss.detach()
        clip = self.config.optim.grad_clip or float("inf")
        grad_norm = torch.nn.utils.clip_grad_norm_(model.module.parameters(), clip, foreach=True)
        self.optimizer.step()
        self.scheduler.step()
        self.optimizer.zero_grad(set_to_none=True)
        if hasattr(grad_norm, "full_tensor"):
            grad_norm = grad_norm.full_tensor()
        return total, grad_norm, lr

    def global_mean(self, value: torch.Tensor) -> float:
        summed = value.detach().clone()
        dist.all_reduce(summed, op=dist.ReduceOp.SUM)
        return summed.item() / self.runtime.world_size

    def report_progress(self, lr: float, grad_norm: float, tokens_per_second: float, elapsed: float) -> None:
        extra = {}
        if self.runtime.is_cuda:
            extra["maxMemoryGiB"] = round(torch.cuda.max_memory_allocated(self.runtime.device) / 2**30, 3)
        self.reporter.event(
            "progress",
            step=self.step,
            totalSteps=self.config.steps,
            loss=self.loss,
            learningRate=lr,
            tokensPerSecond=round(tokens_per_second, 1),
            mfu=mfu(tokens_per_second, self.model.flops_per_token, self.runtime.world_size, self.peak_tflops),
            lastCheckpointStep=self.last_checkpoint,
            gradNorm=grad_norm,
            elapsedSeconds=round(elapsed, 3),
            **extra,
        )
        if self.scalars is not None:
            self.scalars.scalars(self.step, {"train/loss": self.loss, "train/learning_rate": lr,
                                             "train/tokens_per_second": tokens_per_second})

    # -- checkpoints and stopping --------------------------------------------------------------

    def save(self, reason: str) -> None:
        if self.checkpointer is None:
            raise RuntimeError("checkpointing is off (no checkpoint.dir)")
        state = TrainerState(self.step, self.samples_seen, self.scheduler.state_dict(), capture_rng())
        report = self.checkpointer.save(self.model.module, self.optimizer, state, reason)
        self.last_checkpoint = self.step
        self.reporter.event("checkpoint", step=self.step, **report)

    def stop_for_signal(self) -> int:
        if self.checkpointer and self.last_checkpoint != self.step and self.step > 0:
            self.save("sigterm")
        self.reporter.event(
            "stopped", step=self.step, totalSteps=self.config.steps, lastCheckpointStep=self.last_checkpoint,
            reason="SIGTERM", exitCode=exit_codes.TERMINATED,
        )
        self.reporter.log(f"stopped by SIGTERM at step {self.step}; last checkpoint: step {self.last_checkpoint}")
        return exit_codes.TERMINATED
