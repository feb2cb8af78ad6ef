"""Assemble the model to train: built on the meta device, sharded, then materialised and filled."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Callable, Optional

import torch
import torch.distributed as dist
from torch import nn
from torch.distributed.checkpoint.state_dict import StateDictOptions, set_model_state_dict

from pinery_trainer import hf
from pinery_trainer.config import TrainerConfig
from pinery_trainer.configfile import ConfigError
from pinery_trainer.distributed import Runtime
from pinery_trainer.model import Transformer
from pinery_trainer.presets import flops_per_token, resolve_shape
from pinery_trainer.sharding import apply_fsdp, materialisation_device


@dataclass
class BuiltModel:
    module: nn.Module
    logits: Callable[[torch.Tensor], torch.Tensor]
    # Fills the weights a fresh run starts from (seeded init, or the pretrained weights).
    initialise: Callable[[], None]
    vocab_size: int
    parameters: int
    flops_per_token: float
    description: str


def build_model(config: TrainerConfig, runtime: Runtime, tokenizer_vocab: Optional[int]) -> BuiltModel:
    builder = _build_hf if config.model.hf_path else _build_preset
    return builder(config, runtime, tokenizer_vocab)


def _build_preset(config: TrainerConfig, runtime: Runtime, tokenizer_vocab: Optional[int]) -> BuiltModel:
    shape = resolve_shape(config.model.preset, **config.model.overrides())
    if tokenizer_vocab and tokenizer_vocab > shape.vocab_size:
        if config.model.vocab_size is not None:
            raise ConfigError([("model.vocabSize", f"must be at least the tokenizer's vocabulary ({tokenizer_vocab})")])
        shape = replace(shape, vocab_size=-(-tokenizer_vocab // 64) * 64)
    with torch.device("meta"):
        model = Transformer(shape)
    model.set_activation_checkpointing(config.fsdp.activation_checkpointing)
    apply_fsdp(model, model.blocks, runtime.mesh, config.fsdp, runtime.device, config.model.compile)
    model.to_empty(device=materialisation_device(config.fsdp, runtime.device))
    parameters = count_parameters(model)
    return BuiltModel(
        module=model,
        logits=model,
        initialise=lambda: model.init_weights(config.seed),
        vocab_size=shape.vocab_size,
        parameters=parameters,
        flops_per_token=flops_per_token(
            parameters, shape.layers, shape.dim, config.model.seq_len, embedding_parameters=shape.vocab_size * shape.dim
        ),
        description=f"preset {config.model.preset} ({parameters / 1e6:.1f}M parameters)",
    )


def _build_hf(config: TrainerConfig, runtime: Runtime, tokenizer_vocab: Optional[int]) -> BuiltModel:
    path = config.model.hf_path
    assert path, "build_model builds from model.hfPath only when it is set"
    hf_config = hf.load_hf_config(path)
    vocab = hf.vocab_size(hf_config)
    if tokenizer_vocab and tokenizer_vocab > vocab:
        raise ConfigError([("data.tokenizer", f"has {tokenizer_vocab} tokens, more than the model's vocabulary ({vocab})")])
    model = hf.build_meta(hf_config)
    architecture = type(model).__name__  # before fully_shard renames the class
    if config.fsdp.activation_checkpointing:
        model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
    apply_fsdp(model, hf.blocks(model), runtime.mesh, config.fsdp, runtime.device, config.model.compile)
    model.to_empty(device=materialisation_device(config.fsdp, runtime.device))

    def initialise() -> None:
        state, buffers = hf.load_pretrained_state(path) if runtime.is_main else ({}, {})
        set_model_state_dict(
            model, state, options=StateDictOptions(full_state_dict=True, broadcast_from_rank0=True)
        )
        # Buffers (rotary frequencies) are not in the state dict and were left empty.
        with torch.no_grad():
            for name, buffer in model.named_buffers():
                if runtime.is_main:
                    buffer.copy_(buffers[name])
                dist.broadcast(buffer, src=0)

    parameters = count_parameters(model)
    embedding = model.get_input_embeddings().weight
    assert isinstance(embedding, torch.Tensor)  # a Parameter (a DTensor once sharded)
    output = model.get_output_embeddings()
    tied = output is not None and output.weight is embedding
    layers, width = hf.flops_shape(hf_config)
    return BuiltModel(
        module=model,
        logits=lambda tokens: model(input_ids=tokens).logits,
        initialise=initialise,
        vocab_size=vocab,
        parameters=parameters,
        flops_per_token=flops_per_token(
            parameters, layers, width, config.model.seq_len, embedding_parameters=0 if tied else embedding.numel()
        ),
        description=f"{architecture} from {path} ({parameters / 1e6:.1f}M parameters)",
    )


def count_parameters(model: nn.Module) -> int:
    # DTensor.numel() is the global size, so this is the unsharded count.
    return sum(p.numel() for p in model.parameters())
