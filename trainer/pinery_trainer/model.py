"""The built-in decoder-only transformer (Llama-style: RMSNorm, rotary embeddings, SwiGLU, GQA)."""

from __future__ import annotations

import zlib

import torch
import torch.nn.functional as F
from torch import nn
from torch.distributed.tensor import DTensor, distribute_tensor
from torch.utils.checkpoint import checkpoint

from pinery_trainer.presets import Shape

ROPE_THETA = 10000.0
INIT_STD = 0.02


class RMSNorm(nn.Module):
    def __init__(self, dim: int, eps: float = 1e-5):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        normed = x.float() * torch.rsqrt(x.float().pow(2).mean(-1, keepdim=True) + self.eps)
        return normed.type_as(x) * self.weight


def rotary(seq_len: int, head_dim: int, device: torch.device) -> tuple[torch.Tensor, torch.Tensor]:
    # Computed per forward, not kept as a buffer: nothing to materialise after meta init.
    inv_freq = 1.0 / (ROPE_THETA ** (torch.arange(0, head_dim, 2, device=device, dtype=torch.float32) / head_dim))
    angles = torch.outer(torch.arange(seq_len, device=device, dtype=torch.float32), inv_freq)
    return angles.cos(), angles.sin()


def apply_rotary(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
    # x: (batch, heads, seq, head_dim); rotate pairs (first half, second half).
    first, second = x.float().chunk(2, dim=-1)
    rotated = torch.cat((first * cos - second * sin, first * sin + second * cos), dim=-1)
    return rotated.type_as(x)


class Attention(nn.Module):
    def __init__(self, shape: Shape):
        super().__init__()
        self.heads, self.kv_heads, self.head_dim = shape.heads, shape.kv_heads, shape.head_dim
        self.wq = nn.Linear(shape.dim, shape.heads * shape.head_dim, bias=False)
        self.wk = nn.Linear(shape.dim, shape.kv_heads * shape.head_dim, bias=False)
        self.wv = nn.Linear(shape.dim, shape.kv_heads * shape.head_dim, bias=False)
        self.wo = nn.Linear(shape.heads * shape.head_dim, shape.dim, bias=False)

    def forward(self, x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
        batch, seq, _ = x.shape
        q = self.wq(x).view(batch, seq, self.heads, self.head_dim).transpose(1, 2)
        k = self.wk(x).view(batch, seq, self.kv_heads, self.head_dim).transpose(1, 2)
        v = self.wv(x).view(batch, seq, self.kv_heads, self.head_dim).transpose(1, 2)
        q, k = apply_rotary(q, cos, sin), apply_rotary(k, cos, sin)
        out = F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=self.kv_heads != self.heads)
        return self.wo(out.transpose(1, 2).reshape(batch, seq, -1))


class FeedForward(nn.Module):
    def __init__(self, dim: int, hidden: int):
        super().__init__()
        self.w1 = nn.Linear(dim, hidden, bias=False)
        self.w2 = nn.Linear(hidden, dim, bias=False)
        self.w3 = nn.Linear(dim, hidden, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.w2(F.silu(self.w1(x)) * self.w3(x))


class Block(nn.Module):
    def __init__(self, shape: Shape):
        super().__init__()
        self.attention_norm = RMSNorm(shape.dim)
        self.attention = Attention(shape)
        self.ffn_norm = RMSNorm(shape.dim)
        self.feed_forward = FeedForward(shape.dim, shape.ffn_dim)
        self.activation_checkpointing = False

    def _forward(self, x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
        x = x + self.attention(self.attention_norm(x), cos, sin)
        return x + self.feed_forward(self.ffn_norm(x))

    def forward(self, x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
        if self.activation_checkpointing and torch.is_grad_enabled():
            return checkpoint(self._forward, x, cos, sin, use_reentrant=False)
        return self._forward(x, cos, sin)


class Transformer(nn.Module):
    def __init__(self, shape: Shape):
        super().__init__()
        self.shape = shape
        self.tok_embeddings = nn.Embedding(shape.vocab_size, shape.dim)
        self.layers = nn.ModuleList(Block(shape) for _ in range(shape.layers))
        self.norm = RMSNorm(shape.dim)
        self.output = nn.Linear(shape.dim, shape.vocab_size, bias=False)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        x = self.tok_embeddings(tokens)
        cos, sin = rotary(tokens.shape[1], self.shape.head_dim, x.device)
        for layer in self.layers:
            x = layer(x, cos, sin)
        return self.output(self.norm(x))

    @property
    def blocks(self) -> list[nn.Module]:
        return list(self.layers)

    def set_activation_checkpointing(self, enabled: bool) -> None:
        for block in self.layers:
            assert isinstance(block, Block)  # layers holds only Blocks (fully_shard keeps the class as a base)
            block.activation_checkpointing = enabled

    def init_weights(self, seed: int) -> None:
        """Seeded initialisation that gives the same weights at every world size.

        Each parameter is drawn whole from its own generator (seed and name), then each rank
        keeps its shard, so the result does not depend on how the model is sharded; only one
        full parameter exists at a time.
        """
        residual_std = INIT_STD / (2 * self.shape.layers) ** 0.5
        with torch.no_grad():
            for name, param in self.named_parameters():
                if name.endswith("norm.weight"):
                    fill_param(param, lambda full: full.fill_(1.0))
                    continue
                std = residual_std if name.endswith(("wo.weight", "w2.weight")) else INIT_STD
                generator_seed = (seed * 1_000_003 + zlib.crc32(name.encode())) % (2**63)
                fill_param(param, lambda full, s=generator_seed, d=std: normal_(full, s, d))


def normal_(full: torch.Tensor, seed: int, std: float) -> torch.Tensor:
    generator = torch.Generator(device=full.device).manual_seed(seed)
    return full.normal_(0.0, std, generator=generator)


def fill_param(param: torch.Tensor, fill) -> None:
    """Fill a (possibly sharded) parameter from a full tensor that `fill` writes."""
    if not isinstance(param, DTensor):
        fill(param.data)
        return
    full = fill(torch.empty(param.shape, dtype=param.dtype, device=param.to_local().device))
    shard = distribute_tensor(full, param.device_mesh, param.placements, src_data_rank=None)
    param.to_local().copy_(shard.to_local())
