"""A Hugging Face causal language model from a local directory, built for FSDP2.

Every rank builds the model on the meta device; after sharding, rank 0 alone reads the weights
and broadcasts them shard by shard, so a node holds one full copy at most instead of one per
process.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import torch
from torch import nn

from pinery_trainer.configfile import ConfigError

if TYPE_CHECKING:  # transformers is imported when a model needs it (the trainer extra)
    from torch.distributed.checkpoint.state_dict import ValueType
    from transformers import PreTrainedModel


def _transformers():
    try:
        import transformers
    except ImportError:  # pragma: no cover - transformers is in the trainer extra
        raise ConfigError([("model.hfPath", "needs the transformers package (pip install 'pinery[trainer]')")]) from None
    transformers.logging.set_verbosity_error()
    transformers.utils.logging.disable_progress_bar()
    return transformers


def load_hf_config(path: str):
    if not (Path(path) / "config.json").is_file():
        raise ConfigError([("model.hfPath", f"{path} has no config.json (a local Hugging Face model directory is expected)")])
    transformers = _transformers()
    try:
        return transformers.AutoConfig.from_pretrained(path, local_files_only=True)
    except (OSError, ValueError) as e:
        raise ConfigError([("model.hfPath", f"cannot read the model config in {path}: {e}")]) from None


def build_meta(config) -> PreTrainedModel:
    transformers = _transformers()
    with torch.device("meta"):
        try:
            model = transformers.AutoModelForCausalLM.from_config(config, dtype=torch.float32)
        except ValueError as e:
            raise ConfigError([("model.hfPath", f"is not a causal language model: {e}")]) from None
    model.config.use_cache = False
    return model


def load_pretrained_state(path: str) -> tuple[dict[str, ValueType], dict[str, torch.Tensor]]:
    """(state dict, every buffer) of the saved model, on the CPU (rank 0 only); the state dict
    is typed as set_model_state_dict takes it."""
    transformers = _transformers()
    model = transformers.AutoModelForCausalLM.from_pretrained(path, local_files_only=True, dtype=torch.float32)
    return model.state_dict(), dict(model.named_buffers())


def blocks(model: nn.Module) -> list[nn.Module]:
    """The transformer blocks: the classes the model says must not be split across devices."""
    names = set(getattr(model, "_no_split_modules", None) or ())
    found = [m for m in model.modules() if type(m).__name__ in names]
    if not found:
        raise ConfigError([("model.hfPath", f"{type(model).__name__} names no transformer block class to shard")])
    return found


def vocab_size(config) -> int:
    return config.get_text_config().vocab_size


def flops_shape(config) -> tuple[int, int]:
    """(layers, width) for the FLOPs estimate."""
    text = config.get_text_config()
    return text.num_hidden_layers, text.hidden_size
