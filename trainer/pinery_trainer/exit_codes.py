"""Exit codes of the trainer, so that an FSDPJob can tell retryable failures from permanent ones.

A worker exits with one of these. Plain `torchrun` reports 1 for any failed worker, so the
FSDPJob runs `python -m pinery_trainer.launch`, which is torchrun with the workers' codes passed
through (`launcher_exit_code`).
"""

from __future__ import annotations

import signal
from collections.abc import Iterable

OK = 0
# Generic failure (an exception during training): retryable by a gang restart.
FAILURE = 1
# The configuration is invalid (sysexits EX_CONFIG): retrying cannot help.
CONFIG_ERROR = 78
# The trainer was asked to stop (SIGTERM) and saved a checkpoint first (128 + SIGTERM).
TERMINATED = 143

# Exit codes an FSDPJob running the built-in trainer never retries.
NON_RETRYABLE = (CONFIG_ERROR,)


def launcher_exit_code(worker_codes: Iterable[int]) -> int:
    """One exit code for the workers that failed on a node.

    A configuration error anywhere wins (every rank sees the same configuration, and retrying
    cannot help); workers that all stopped for SIGTERM make 143; anything else is a failure.
    """
    codes = list(worker_codes)
    if not codes:
        return OK
    if CONFIG_ERROR in codes:
        return CONFIG_ERROR
    if all(code in (TERMINATED, -signal.SIGTERM) for code in codes):
        return TERMINATED
    return FAILURE
