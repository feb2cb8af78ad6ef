"""A torchrun script that reports its progress to pinery (docs/fsdpjob.md, "Progress").

Rank 0 prints one JSON line per step with `report.step`; the operator reads them into
status.progress. `pinery_trainer.report` needs only the standard library: an image without
pinery's trainer can carry a copy of that file (trainer/pinery_trainer/report.py) as report.py.
"""

import os
import time
from datetime import timedelta

import torch
import torch.distributed as dist

try:
    from pinery_trainer import report
except ImportError:  # an image with a copy of report.py beside this script
    import report

STEPS = int(os.environ.get("STEPS", "30"))
dist.init_process_group("gloo", timeout=timedelta(seconds=60))
torch.manual_seed(0)
model = torch.nn.Linear(16, 1)
for p in model.parameters():  # every rank starts from rank 0's weights
    dist.broadcast(p.data, 0)
opt = torch.optim.SGD(model.parameters(), lr=0.05)
target = torch.randn(16, 1)
start, samples = time.monotonic(), 0
for step in range(1, STEPS + 1):
    x = torch.randn(64, 16)
    loss = torch.nn.functional.mse_loss(model(x), x @ target)
    opt.zero_grad()
    loss.backward()
    for p in model.parameters():  # data parallel by hand: average the gradients
        dist.all_reduce(p.grad)
        p.grad /= dist.get_world_size()
    opt.step()
    samples += 64 * dist.get_world_size()
    checkpoint_step = step - step % 10 if step >= 10 else None
    report.step(step, loss=loss.item(), total_steps=STEPS,
                tokens_per_second=samples / (time.monotonic() - start), checkpoint_step=checkpoint_step)
dist.barrier()
dist.destroy_process_group()
