"""`nprocPerNode`, resolved: `auto` means the GPUs the container asks for, else one process.

torchrun's own `auto` counts CPUs when there is no GPU (a 64-core node starts 64 workers) and
Kubeflow's default left 7 of 8 GPUs idle; pinery resolves the number itself and passes it on.
"""

from __future__ import annotations

import re
from decimal import Decimal

from pinery.api.fsdpjob import FSDPJobSpec

GPU_RESOURCES = ("nvidia.com/gpu", "amd.com/gpu")

_BINARY = {"Ki": 1024, "Mi": 1024**2, "Gi": 1024**3, "Ti": 1024**4, "Pi": 1024**5, "Ei": 1024**6}
_DECIMAL = {"n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}
_QUANTITY = re.compile(r"^([+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+))(Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE]|[eE][+-]?[0-9]+)?$")


def quantity_value(quantity: int | str) -> Decimal:
    """The number a Kubernetes quantity stands for ("2", "500m", "1Ki", "1e3")."""
    if isinstance(quantity, int):
        return Decimal(quantity)
    match = _QUANTITY.match(quantity.strip())
    if not match:
        raise ValueError(f"{quantity!r} is not a Kubernetes quantity")
    number, suffix = Decimal(match.group(1)), match.group(2) or ""
    if suffix in _BINARY:
        return number * _BINARY[suffix]
    if suffix in _DECIMAL:
        return number.scaleb(_DECIMAL[suffix])
    return number.scaleb(int(suffix[1:]))


def gpu_count(spec: FSDPJobSpec) -> int:
    """GPUs the training container requests (limits and requests; extended resources need both equal)."""
    res = spec.resources
    if res is None:
        return 0
    total = 0
    for name in GPU_RESOURCES:
        values = [quantity_value(m[name]) for m in (res.limits or {}, res.requests or {}) if name in m]
        if values:
            total += int(max(values))
    return total


def nproc_per_node(spec: FSDPJobSpec) -> int:
    if spec.nproc_per_node != "auto":
        return int(spec.nproc_per_node)
    return max(gpu_count(spec), 1)
