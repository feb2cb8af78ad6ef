"""Where the next read of rank 0's log for progress starts: after what the last read returned,
so that a running job's log is read once, not 200 lines again every pass.

The read asks for `tailLines` (a bound when the cursor knows nothing) and `sinceTime`: the
newest line's time from the last read, in whole seconds. Whole seconds because that is all that
reaches the kubelet: the API server forwards PodLogOptions in a query, where metav1.Time writes
RFC 3339 without a fraction (apimachinery pkg/apis/meta/v1/time.go `MarshalQueryParameter`),
and the kubelet keeps every line not before it (pkg/kubelet/kuberuntime/logs/logs.go
`ReadLogs`: `msg.timestamp.Before(opts.since)` skips). So the lines of that last second come
again; `progress_from_logs` takes a line it has seen as nothing new.

A new rank-0 pod (another uid: a restart, or a pod on another node whose clock may be behind)
starts over with the tail.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Optional

from pinery.api.conditions import now_rfc3339, parse_time

# Lines of rank 0's log read when the cursor knows nothing (a new pod, a restarted operator).
TAIL_LINES = 200


@dataclass
class LogCursor:
    pod_uid: Optional[str] = None
    since: Optional[str] = None  # RFC 3339, whole seconds, UTC

    def since_time(self, pod_uid: Optional[str]) -> Optional[str]:
        """The `sinceTime` for a read of the pod `pod_uid`: None for a pod not read before."""
        if pod_uid is None or pod_uid != self.pod_uid:
            return None
        return self.since

    def advance(self, pod_uid: Optional[str], text: str) -> None:
        """Record a read of the pod `pod_uid` (with `timestamps`) that returned `text`."""
        if pod_uid != self.pod_uid:
            self.pod_uid, self.since = pod_uid, None
        newest = None
        for line in text.splitlines():
            stamp = _line_time(line)
            if stamp is not None and (newest is None or stamp > newest):
                newest = stamp
        if newest is not None:
            self.since = now_rfc3339(newest)  # whole seconds


def _line_time(line: str) -> Optional[datetime]:
    """The time of a kubelet `timestamps` prefix (RFC3339Nano); None for a line without one."""
    try:
        return parse_time(line.split(" ", 1)[0])
    except ValueError:
        return None
