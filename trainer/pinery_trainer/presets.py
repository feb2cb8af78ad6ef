"""Shapes of the built-in decoder-only transformers (Llama-style), without importing torch.

Pure data and arithmetic: the configuration checks overrides against them, the trainer builds
them, and MFU needs their FLOPs per token.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Optional


@dataclass(frozen=True)
class Shape:
    dim: int
    layers: int
    heads: int
    kv_heads: int
    vocab_size: int
    ffn_dim: int

    @property
    def head_dim(self) -> int:
        return self.dim // self.heads

    def parameters(self) -> int:
        """Parameter count (untied input and output embeddings, RMSNorm weights, no biases)."""
        kv_dim = self.kv_heads * self.head_dim
        attention = 2 * self.dim * self.dim + 2 * self.dim * kv_dim
        block = attention + 3 * self.dim * self.ffn_dim + 2 * self.dim
        return self.layers * block + 2 * self.vocab_size * self.dim + self.dim


def swiglu_hidden(dim: int, multiple_of: int = 64) -> int:
    """Llama's SwiGLU width: 2/3 of 4*dim, rounded up to a multiple."""
    hidden = int(2 * 4 * dim / 3)
    return multiple_of * ((hidden + multiple_of - 1) // multiple_of)


PRESETS: dict[str, Shape] = {
    "tiny": Shape(dim=128, layers=4, heads=4, kv_heads=4, vocab_size=512, ffn_dim=swiglu_hidden(128)),
    "small": Shape(dim=512, layers=8, heads=8, kv_heads=8, vocab_size=32000, ffn_dim=swiglu_hidden(512)),
    "base": Shape(dim=768, layers=12, heads=12, kv_heads=12, vocab_size=32000, ffn_dim=swiglu_hidden(768)),
    # TinyLlama-1.1B's shape.
    "1b": Shape(dim=2048, layers=22, heads=32, kv_heads=4, vocab_size=32000, ffn_dim=5632),
    # Llama-2-7B's shape.
    "7b": Shape(dim=4096, layers=32, heads=32, kv_heads=32, vocab_size=32000, ffn_dim=11008),
}


def resolve_shape(
    preset: str,
    *,
    dim: Optional[int] = None,
    layers: Optional[int] = None,
    heads: Optional[int] = None,
    kv_heads: Optional[int] = None,
    vocab_size: Optional[int] = None,
) -> Shape:
    """The preset with overrides applied; a changed width recomputes the SwiGLU width."""
    base = PRESETS[preset]
    new_dim = dim or base.dim
    new_heads = heads or base.heads
    return replace(
        base,
        dim=new_dim,
        layers=layers or base.layers,
        heads=new_heads,
        # Overriding heads without kvHeads keeps plain multi-head attention.
        kv_heads=kv_heads or (base.kv_heads if heads is None else new_heads),
        vocab_size=vocab_size or base.vocab_size,
        ffn_dim=base.ffn_dim if dim is None else swiglu_hidden(new_dim),
    )


def shape_problems(shape: Shape) -> list[tuple[str, str]]:
    """Why a shape cannot be built, as (field path, message)."""
    out = []
    if shape.dim % shape.heads:
        out.append(("model.heads", f"must divide the model width ({shape.dim})"))
    elif shape.head_dim % 2:
        out.append(("model.heads", f"must leave an even head width for rotary embeddings (dim/heads = {shape.head_dim})"))
    if shape.heads % shape.kv_heads:
        out.append(("model.kvHeads", f"must divide the number of attention heads ({shape.heads})"))
    return out


def flops_per_token(parameters: int, layers: int, dim: int, seq_len: int, embedding_parameters: int = 0) -> float:
    """Training FLOPs per token: 6 per non-embedding weight plus attention (the PaLM estimate)."""
    return 6.0 * (parameters - embedding_parameters) + 12.0 * layers * dim * seq_len
