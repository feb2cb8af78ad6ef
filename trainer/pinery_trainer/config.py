"""Configuration of the built-in trainer: one pydantic model, importable without torch.

The FSDPJob's `spec.trainer` is this model; the trainer reads it from a YAML or JSON file.
Field names are camelCase on the wire, as in every pinery API.
"""

from __future__ import annotations

from typing import Literal, Optional

from pydantic import BaseModel, ConfigDict, Field, ValidationInfo, model_validator
from pydantic.alias_generators import to_camel

from pinery_trainer.presets import resolve_shape, shape_problems

Preset = Literal["tiny", "small", "base", "1b", "7b"]
# float16 would need loss scaling, which FSDP2 training here does not do: bfloat16 is the
# low-precision choice.
Dtype = Literal["float32", "bfloat16"]
# full: one shard group of every rank. hybrid (HSDP): shard within groups of shardGroupSize
# ranks (a node by default), replicate across groups.
Strategy = Literal["full", "hybrid"]


DEFAULT_WARMUP_STEPS = 10


class _Model(BaseModel):
    # Same conventions as pinery.api (the trainer may not import the operator).
    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="forbid")


class ModelConfig(_Model):
    """The model to train: a built-in decoder-only transformer preset, or a local Hugging Face model."""

    preset: Preset = Field(
        "tiny",
        description=(
            "Built-in Llama-style transformer: tiny (1M parameters, for tests and CPUs), small "
            "(58M), base (134M), 1b (1.1B, TinyLlama's shape), 7b (6.7B, Llama-2-7B's shape). "
            "Built on the meta device and materialised shard by shard after sharding. Ignored "
            "when hfPath is set."
        ),
    )
    hf_path: Optional[str] = Field(
        None,
        min_length=1,
        max_length=4096,
        description="Directory of a Hugging Face causal language model (config and weights) to train instead of a preset.",
    )
    seq_len: int = Field(128, ge=8, le=131072, description="Sequence length in tokens.")
    vocab_size: Optional[int] = Field(
        None, ge=2, le=1_000_000, description="Override the preset's vocabulary size."
    )
    dim: Optional[int] = Field(None, ge=8, le=65536, description="Override the preset's model width.")
    layers: Optional[int] = Field(None, ge=1, le=1024, description="Override the preset's number of blocks.")
    heads: Optional[int] = Field(None, ge=1, le=1024, description="Override the preset's attention heads.")
    kv_heads: Optional[int] = Field(
        None, ge=1, le=1024, description="Override the preset's key/value heads (grouped-query attention)."
    )
    compile: bool = Field(
        False, description="torch.compile each block: faster steps on GPUs, but the first step takes tens of seconds."
    )

    def overrides(self) -> dict[str, int]:
        return {
            name: value
            for name in ("dim", "layers", "heads", "kv_heads", "vocab_size")
            if (value := getattr(self, name)) is not None
        }


class DataConfig(_Model):
    """Training data: synthetic tokens, or text/JSONL files, sharded across ranks."""

    source: str = Field(
        "synthetic",
        min_length=1,
        max_length=4096,
        description="'synthetic' for seeded random tokens, or the path of a text/JSONL file or a directory of them.",
    )
    format: Literal["auto", "text", "jsonl"] = Field(
        "auto", description="File format; auto decides by file extension (.jsonl is JSONL)."
    )
    text_field: str = Field(
        "text", min_length=1, max_length=256, description="Key holding the text in each JSONL record."
    )
    tokenizer: str = Field(
        "byte",
        min_length=1,
        max_length=4096,
        description="'byte' for the built-in byte-level tokenizer, or a local Hugging Face tokenizer directory.",
    )


class OptimConfig(_Model):
    """AdamW with linear warm-up and cosine decay."""

    lr: float = Field(3e-4, gt=0, le=10, description="Peak learning rate.")
    min_lr_ratio: float = Field(0.1, ge=0, le=1, description="Final learning rate as a fraction of lr.")
    warmup_steps: Optional[int] = Field(
        None,
        ge=0,
        description=f"Steps of linear warm-up. Default: {DEFAULT_WARMUP_STEPS}, or steps when the run is shorter.",
    )
    weight_decay: float = Field(0.1, ge=0, description="AdamW weight decay.")
    beta1: float = Field(0.9, ge=0, lt=1, description="AdamW beta1.")
    beta2: float = Field(0.95, ge=0, lt=1, description="AdamW beta2.")
    eps: float = Field(1e-8, gt=0, description="AdamW epsilon.")
    grad_clip: float = Field(1.0, ge=0, description="Clip the global gradient norm to this (0 disables).")


class MixedPrecisionConfig(_Model):
    """FSDP2 mixed precision."""

    param_dtype: Dtype = Field(
        "float32",
        description="Dtype of parameters in forward and backward (bfloat16 on GPUs); sharded parameters and optimizer state stay float32.",
    )
    reduce_dtype: Dtype = Field("float32", description="Dtype of the gradient reduce-scatter.")


class FSDPConfig(_Model):
    """How the model is sharded with FSDP2 (fully_shard per block and at the root)."""

    strategy: Strategy = Field(
        "full",
        description=(
            "full: shard parameters, gradients and optimizer state across every rank. hybrid (HSDP): shard "
            "within groups of shardGroupSize ranks and replicate across groups, so that all-gathers and "
            "reduce-scatters stay inside a group (a node) and only one gradient all-reduce crosses groups."
        ),
    )
    shard_group_size: Optional[int] = Field(
        None,
        ge=1,
        le=1_000_000,
        description=(
            "Ranks per shard group with strategy hybrid; must divide the world size. Default: the processes "
            "of one node (LOCAL_WORLD_SIZE). Equal to the world size it is full sharding; 1 replicates the "
            "whole model on every rank."
        ),
    )

    reshard_after_forward: bool = Field(
        True, description="Free gathered parameters after forward (saves memory, costs a second all-gather)."
    )
    mixed_precision: MixedPrecisionConfig = Field(
        default_factory=MixedPrecisionConfig, description="Parameter and reduction dtypes."
    )
    cpu_offload: bool = Field(
        False, description="Keep sharded parameters, gradients and optimizer state on the CPU (the optimizer steps there)."
    )
    activation_checkpointing: bool = Field(
        False, description="Recompute block activations in backward to save memory."
    )


class CheckpointConfig(_Model):
    """Distributed checkpoints (torch.distributed.checkpoint), resumable at any world size."""

    dir: Optional[str] = Field(
        None,
        min_length=1,
        max_length=4096,
        description="Directory for checkpoints; none are written when unset. PINERY_CHECKPOINT_DIR overrides it.",
    )
    interval_steps: int = Field(
        100,
        ge=1,
        description="Save every this many steps (and on SIGTERM). PINERY_CHECKPOINT_INTERVAL overrides it.",
    )
    keep: int = Field(3, ge=1, le=1000, description="How many complete checkpoints to keep.")


class ReportConfig(_Model):
    """What rank 0 reports beside its JSON progress lines."""

    tensorboard_dir: Optional[str] = Field(
        None,
        min_length=1,
        max_length=4096,
        description=(
            "Directory where rank 0 writes TensorBoard scalars (train/loss, train/learning_rate, "
            "train/tokens_per_second) at every progress line, one event file per run; for example a "
            "directory on the checkpoint volume. None are written when unset."
        ),
    )


class TrainerConfig(_Model):
    """Configuration of pinery's built-in FSDP2 trainer."""

    steps: int = Field(100, ge=1, le=100_000_000, description="Total optimizer steps.")
    seed: int = Field(0, ge=0, description="Seed for initialisation and data order.")
    log_every: int = Field(10, ge=1, description="Rank 0 prints a JSON progress line every this many steps.")
    micro_batch_size: int = Field(4, ge=1, le=65536, description="Sequences per rank per micro-step.")
    grad_accum_steps: int = Field(
        1, ge=1, le=65536, description="Micro-steps per optimizer step. Ignored when globalBatchSize is set."
    )
    global_batch_size: Optional[int] = Field(
        None,
        ge=1,
        le=100_000_000,
        description=(
            "Sequences per optimizer step over all ranks. When set, gradient accumulation is "
            "globalBatchSize / (microBatchSize x world size), so that a run resumed at another "
            "world size continues exactly; it must divide evenly."
        ),
    )
    peak_tflops: Optional[float] = Field(
        None,
        gt=0,
        le=100_000,
        description="Peak dense TFLOP/s of one GPU for the mfu figure; detected for A100, H100, H200, B200 and L4 when unset.",
    )
    process_group_timeout_seconds: int = Field(
        600,
        ge=10,
        description="Collective timeout: a hung rank fails the job after this long instead of 30 minutes.",
    )
    model: ModelConfig = Field(default_factory=ModelConfig, description="Model to train.")
    data: DataConfig = Field(default_factory=DataConfig, description="Training data.")
    optim: OptimConfig = Field(default_factory=OptimConfig, description="Optimizer and schedule.")
    fsdp: FSDPConfig = Field(default_factory=FSDPConfig, description="Sharding and precision.")
    checkpoint: CheckpointConfig = Field(
        default_factory=CheckpointConfig, description="Checkpointing."
    )
    report: ReportConfig = Field(default_factory=ReportConfig, description="Reporting beside the progress lines.")

    def warmup_steps(self) -> int:
        if self.optim.warmup_steps is None:
            return min(DEFAULT_WARMUP_STEPS, self.steps)
        return self.optim.warmup_steps

    def problems(self) -> list[tuple[str, str]]:
        """Cross-field rules, as (field path, message)."""
        out = []
        if self.optim.warmup_steps is not None and self.optim.warmup_steps > self.steps:
            out.append(("optim.warmupSteps", f"must not exceed steps ({self.steps})"))
        if self.fsdp.shard_group_size is not None and self.fsdp.strategy != "hybrid":
            out.append(("fsdp.shardGroupSize", "applies only to fsdp.strategy hybrid"))
        if self.global_batch_size is not None and self.global_batch_size % self.micro_batch_size:
            out.append(("globalBatchSize", f"must be a multiple of microBatchSize ({self.micro_batch_size})"))
        overrides = self.model.overrides()
        if self.model.hf_path is not None:
            for name in overrides:
                out.append((f"model.{to_camel(name)}", "cannot be combined with model.hfPath (the Hugging Face config decides the shape)"))
        else:
            out.extend(shape_problems(resolve_shape(self.model.preset, **overrides)))
        return out

    @model_validator(mode="after")
    def _check_rules(self, info: ValidationInfo) -> "TrainerConfig":
        # Inside an FSDPJob spec being validated by `pinery validate`, the spec reports these
        # problems itself, with their full paths.
        if info.context and "problems" in info.context:
            return self
        problems = self.problems()
        if problems:
            raise ValueError("; ".join(f"{path}: {message}" for path, message in problems))
        return self
