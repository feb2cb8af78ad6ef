"""The FSDPJob operator's clocks, injected through `Services` as VectorIndex's `Timing` is.

The defaults are the operator's; tests pass shorter ones instead of patching module constants.
"""

from __future__ import annotations

from dataclasses import dataclass

from pinery.backoff import backoff


@dataclass(frozen=True)
class JobTiming:
    # A pod still there this long after its deletion deadline is on a node that stopped
    # answering: it is force-deleted (gracePeriodSeconds 0).
    force_delete_after: float = 60.0
    # How long after rank 0 exited the nodes still waiting to join it are given to report that
    # they did join (a node that reached rank 0 just before it exited may not have said so yet).
    rank0_exit_grace: float = 10.0
    # How often to look again while waiting for pods to go away.
    wait_poll: float = 5.0
    # How often to look again at a gang's PodGroup while its scheduler works on it (PodGroups
    # are read each pass, not watched).
    gang_poll: float = 15.0
    # How often to look again while training runs (progress is read from the logs).
    progress: float = 30.0
    # How long a settled job sleeps when nothing wakes it.
    idle: float = 60.0
    # How long a pass may plan on the last settled pass's view of the job and its children
    # (handlers/fsdpjob.py Snapshot) when no watch event woke it: the Service and the
    # ConfigMap, which no watch covers, are read again at least this often.
    resync: float = 600.0
    # Retries after a failed pass: doubling from retry_first, capped.
    retry_first: float = 2.0
    retry_max: float = 60.0
    # Retries of creations the API server refused (quota, admission): doubling, capped.
    refusal_first: float = 1.0
    refusal_max: float = 60.0

    def retry(self, failures: int) -> float:
        """The wait after the `failures`-th failed pass in a row (1 for the first)."""
        return backoff(failures, base=self.retry_first, cap=self.retry_max)

    def refusal(self, refusals: int) -> float:
        """The longest wait after the `refusals`-th pass in a row with a refused creation."""
        return backoff(refusals - 1, base=self.refusal_first, cap=self.refusal_max)


DEFAULT_TIMING = JobTiming()
