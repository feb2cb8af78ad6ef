"""SIGTERM (preemption, suspend, gang restart) asks the trainer to checkpoint and stop."""

from __future__ import annotations

import signal


class StopRequest:
    """Set by SIGTERM; the training loop acts on it between steps, on every rank together."""

    def __init__(self) -> None:
        self.requested = False

    def install(self) -> "StopRequest":
        signal.signal(signal.SIGTERM, self._handle)
        return self

    def _handle(self, signum, frame) -> None:
        self.requested = True
