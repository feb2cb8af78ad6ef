"""pinery_trainer: the built-in FSDP2 trainer that FSDPJob pods run.

Importing this package (and `pinery_trainer.config`) does not import torch, so the operator can
use the configuration model; torch is imported only by the training code itself.
"""

__version__ = "0.1.0"
