"""Stopping the pass queues (pinery.handlers.pass_queue) with the operator, and
pausing them while Kopf pauses this replica for another (peering).

With peering (the chart's `replicas` above 1), Kopf pauses every replica but the one of highest
priority: it stops their watch streams and their daemons (kopf/_core/engines/daemons.py,
`daemon_killer`, reason OPERATOR_PAUSING), and lists everything again on resume. It offers no
hook for anything else to learn of it. So a Kopf daemon of pinery's is the queues' sentinel: one
runs for the peering object itself (the KopfPeering, or ClusterKopfPeering, named by the
`peering` setting), which Kopf spawns only while the replica is active and stops when it
pauses, like every daemon. The queues run passes only while a sentinel runs; Kopf's peering is
mandatory when named (kopf/_core/reactor/running.py, `spawn_tasks`), so it is paused until it
has seen the peering object, and so are the queues. The sentinel puts no finalizer on the
peering object (pinery.kopf_daemons).
"""

from __future__ import annotations

import asyncio
from typing import Any, Sequence

import kopf

from pinery.handlers.pass_queue import PassQueue
from pinery.kopf_daemons import without_finalizer
from pinery.services import Services

SENTINEL_ID = "pass_queues_sentinel"


def register(registry: kopf.OperatorRegistry, services: Services, queues: Sequence[PassQueue]) -> None:
    @kopf.on.cleanup(id="pass_queues_stop", registry=registry)
    async def pass_queues_stop(**_: Any) -> None:
        await asyncio.gather(*(queue.stop() for queue in queues))  # each with its kind's grace

    peering = services.settings.peering
    if not peering:
        return
    plural = "kopfpeerings" if services.settings.namespaces else "clusterkopfpeerings"
    active = Active(queues)

    @kopf.daemon("kopf.dev", "v1", plural, id=SENTINEL_ID, registry=registry, cancellation_timeout=1.0,
                 when=lambda name, **_: name == peering)
    async def pass_queues_sentinel(stopped: Any, logger: Any, **_: Any) -> None:
        active.up()
        try:
            await stopped.wait()
        finally:
            active.down()

    without_finalizer(registry, SENTINEL_ID)


class Active:
    """How many sentinels run (one per watched namespace with namespaced peering): the queues
    run while at least one does."""

    def __init__(self, queues: Sequence[PassQueue]) -> None:
        self.queues, self.count = queues, 0

    def up(self) -> None:
        self.count += 1
        if self.count == 1:
            for queue in self.queues:
                queue.resume()

    def down(self) -> None:
        self.count -= 1
        if self.count == 0:
            for queue in self.queues:
                queue.pause()
