"""Training faults: a process of a running FSDPJob SIGKILLed mid-run, in local mode with the
built-in trainer checkpointing every few steps.

Each run starts a 2-node job (real torchrun, gloo on loopback, a shared checkpoint volume),
follows rank 0's progress lines, and once training is past a checkpoint and a seeded number of
steps into the next interval, SIGKILLs one real process: a torchrun worker (the trainer rank
itself) or the pod's main process (the launcher, torchrun's agent). Then

- the gang restarts exactly once (status.restarts == 1, both pods of attempt 1) and the job
  succeeds at its last step;
- attempt 1 starts from the newest checkpoint attempt 0 completed (its `start` event's
  `resumedFrom`, against the checkpoint directory when attempt 1's pods appear, and never older
  than the last checkpoint rank 0 logged), and its progress steps follow that step without a
  gap or a repeat of step 1;
- the loss continues: for the steps done twice (after the checkpoint, before the kill), the
  resumed run's loss equals the first run's (the first step after resuming included), and the
  first loss after resuming is far below the loss at step 1, near the losses before the kill.
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import signal
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pinery.local.cluster import LocalCluster
from pinery.local.kubeclient import ApiError, KubeClient
from pinery.local.podrunner import processes
from pinery.local.podrunner.volumes import claim_dir
from tests.reliability.harness import Api, Driver, secret_leaks, wait_until
from tests.support.ports import free_port
from tests.support.trainer import parse_events

NAMESPACE = "training-faults"
# The same steps after a resume give the same loss (same world size, data position, optimizer
# state and RNG from the checkpoint); gloo's sums are not bit-exact across runs, hence a margin.
SAME_LOSS = 1e-3


@dataclass(frozen=True)
class Profile:
    victims: tuple[str, ...]  # what each run kills: "worker-1", "worker-0" (a rank) or "agent-1" (pod's main process)
    steps: int = 60
    interval: int = 5  # checkpoint every this many steps
    kill_after: tuple[int, ...] = (10, 15, 20)  # a run kills once a checkpoint at one of these (seeded) is complete
    run_timeout: float = 240


PROFILES = {
    "reduced": Profile(victims=("worker-1",)),
    "full": Profile(victims=("worker-1", "worker-0", "agent-1", "worker-1", "agent-1", "worker-0")),
}


def trainer_job(name: str, profile: Profile) -> dict:
    return {
        "apiVersion": "pinery.dev/v1alpha1",
        "kind": "FSDPJob",
        "metadata": {"name": name},
        "spec": {
            "numNodes": 2,
            "nprocPerNode": 1,
            "masterPort": free_port(),
            "maxRestarts": 2,
            "startupTimeoutSeconds": 60,
            "terminationGracePeriodSeconds": 5,
            "checkpoint": {"volumeClaimName": f"{name}-checkpoints", "path": "/checkpoints", "intervalSteps": profile.interval},
            "trainer": {
                "steps": profile.steps,
                "logEvery": 1,
                "seed": 1,
                "microBatchSize": 4,
                "processGroupTimeoutSeconds": 30,
                "model": {"preset": "tiny", "seqLen": 32},
                "data": {"source": "synthetic"},
                "optim": {"lr": 0.003, "warmupSteps": 2},
            },
        },
    }


class RankZeroLog:
    """Follows rank 0's pod log (node 0, container trainer) and keeps it per attempt: the pod of
    an attempt and its log are deleted at a gang restart."""

    def __init__(self, api: Api, job: str):
        self.api, self.pod = api, f"{job}-node-0"
        self.by_attempt: dict[str, str] = {}

    async def read(self) -> None:
        try:
            pod = await self.api.get("Pod", self.pod)
            if pod is None:
                return
            attempt = (pod["metadata"].get("labels") or {}).get("pinery.dev/attempt", "?")
            text = await self.api.client.request("GET", self.api.path("Pod", self.pod) + "/log", params={"container": "trainer"})
        except (ApiError, OSError, asyncio.TimeoutError):
            return
        if isinstance(text, str) and len(text) >= len(self.by_attempt.get(attempt, "")):
            self.by_attempt[attempt] = text

    def events(self, attempt: str, kind: str) -> list[dict]:
        return [e for e in parse_events(self.by_attempt.get(attempt, "")) if e["event"] == kind]

    async def follow(self, stop: asyncio.Event) -> None:
        while not stop.is_set():
            await self.read()
            try:
                await asyncio.wait_for(stop.wait(), 0.1)
            except asyncio.TimeoutError:
                pass


def victim_pid(pod: dict, victim: str) -> int | None:
    """The pid to kill in a pod's trainer container: its torchrun worker, or its main process
    (the launcher, torchrun's agent), told apart by the variables torchrun sets for workers."""
    marker = f"{processes.CONTAINER_VARIABLE}={pod['metadata']['uid']}/trainer".encode()
    workers, agents = [], []
    for pid in processes.marked(processes.CONTAINER_VARIABLE, f"{pod['metadata']['uid']}/trainer"):
        try:
            environ = Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if marker not in environ or processes.ended(pid):
            continue
        if any(v.startswith(b"TORCHELASTIC_RESTART_COUNT=") for v in environ):
            workers.append(pid)
        elif b"pinery_trainer.launch" in cmdline:
            agents.append(pid)
    found = workers if victim.startswith("worker") else agents
    return found[0] if len(found) == 1 else None


def loss_by_step(progress: list[dict]) -> dict[int, float]:
    return {p["step"]: p["loss"] for p in progress if p.get("loss") is not None}


def newest_complete_checkpoint(directory: Path) -> int | None:
    """The step of the newest checkpoint with its `complete.json` (written last, atomically)."""
    steps = [int(marker.parent.name.removeprefix("step-")) for marker in directory.glob("step-*/complete.json")]
    return max(steps, default=None)


def check_run(before: RankZeroLog, job: dict | None, pods: list[dict], kill_step: int | None, on_disk: int | None,
              profile: Profile) -> tuple[dict, list[str]]:
    """The numbers of one run and what is wrong with it. `on_disk` is the newest complete
    checkpoint when attempt 1's pods appeared: rank 0's log may miss attempt 0's last lines
    (its pod and log go at the gang restart), and a process orphaned by a killed torchrun
    agent may complete one more checkpoint before its container is swept."""
    out: list[str] = []
    status = (job or {}).get("status") or {}
    if status.get("phase") != "Succeeded":
        out.append(f"job ended {status.get('phase')}, expected Succeeded")
    if status.get("restarts") != 1:
        out.append(f"restarts {status.get('restarts')}, expected exactly 1")
    attempts = sorted((p["metadata"].get("labels") or {}).get("pinery.dev/attempt", "?") for p in pods)
    if attempts != ["1", "1"]:
        out.append(f"pods' attempts {attempts}, expected both of attempt 1 (a gang restart)")
    first, second = loss_by_step(before.events("0", "progress")), loss_by_step(before.events("1", "progress"))
    logged = max((c["step"] for c in before.events("0", "checkpoint")), default=None)
    starts = before.events("1", "start")
    resumed = starts[0].get("resumedFrom") if starts else None
    if on_disk is None or logged is None or on_disk < logged:
        out.append(f"newest complete checkpoint {on_disk} when attempt 1 started, {logged} in attempt 0's log")
    if not starts:
        out.append("attempt 1 printed no start event")
    elif resumed != on_disk or starts[0].get("step") != on_disk:
        out.append(f"attempt 1 resumed from {resumed} (start step {starts[0].get('step')}), "
                   f"but the newest complete checkpoint was {on_disk}")
    steps = sorted(second)
    if on_disk is not None and steps != list(range(on_disk + 1, profile.steps + 1)):
        out.append(f"attempt 1's steps are {steps[:3]}...{steps[-3:]}, expected {on_disk + 1}..{profile.steps}")
    # Steps done twice (after the checkpoint, before the kill) give the same loss both times.
    redone = sorted(set(first) & set(second))
    differing = [s for s in redone if abs(first[s] - second[s]) > SAME_LOSS * max(1.0, abs(first[s]))]
    if differing:
        out.append("steps done twice with another loss: " + ", ".join(f"{s}: {first[s]:.4f} then {second[s]:.4f}" for s in differing))
    if not redone and on_disk is not None and first and max(first) > on_disk:
        out.append(f"steps {on_disk + 1}..{max(first)} were logged before the kill and not done again")
    # The loss continues: the first loss after resuming is far below step 1's (the steps'
    # losses are noisy, so "far" is measured against the mean of the last interval before the kill).
    initial = first.get(1)
    after = second.get(min(second)) if second else None
    window = [first[s] for s in sorted(first)[-profile.interval:]]
    recent = sum(window) / len(window) if window else None
    if initial is None or after is None or recent is None:
        out.append(f"losses missing: step 1 {initial}, after resuming {after}, before the kill {recent}")
    else:
        gained = initial - recent
        if gained < 0.5:
            out.append(f"training had not learned before the kill (loss {initial:.3f} -> {recent:.3f} on average)")
        elif initial - after < 0.5 * gained:
            out.append(f"loss after resuming {after:.3f} is near step 1's {initial:.3f}, not the {recent:.3f} "
                       "before the kill: training restarted instead of continuing")
    numbers = {
        "killedAtStep": kill_step,
        "lastStepBeforeKill": max(first, default=None),
        "checkpointInLog": logged,
        "checkpointOnDisk": on_disk,
        "resumedFrom": resumed,
        "firstStepAfterResume": min(second, default=None),
        "stepsRedone": len(redone),
        "lossAtStep1": initial,
        "lossBeforeKillMeanOfLastInterval": round(recent, 4) if recent is not None else None,
        "lossBeforeKillAtLastStep": first.get(max(first)) if first else None,
        "lossAfterResume": after,
        "lossSameStepBeforeKill": first.get(min(second)) if second else None,
        "maxLossDifferenceOnRedoneSteps": max((abs(first[s] - second[s]) for s in redone), default=None),
        "restarts": status.get("restarts"),
        "phase": status.get("phase"),
        "finalStep": (status.get("progress") or {}).get("step"),
    }
    return numbers, out


async def one_run(cluster: LocalCluster, api: Api, driver: Driver, name: str, victim: str, rng: random.Random,
                  profile: Profile) -> dict[str, Any]:
    log = RankZeroLog(api, name)
    stop = asyncio.Event()
    follower = asyncio.create_task(log.follow(stop))
    # A claim of its own: a job must not resume from another's checkpoints.
    await api.create({"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": f"{name}-checkpoints"},
                      "spec": {"accessModes": ["ReadWriteMany"], "resources": {"requests": {"storage": "1Gi"}}}})
    await api.create(trainer_job(name, profile))
    # Kill a seeded number of steps (1 to interval-1) past a complete checkpoint at a seeded step.
    checkpoint_at, offset = rng.choice(profile.kill_after), rng.randint(1, profile.interval - 1)

    async def at_kill_point():
        checkpoints = [c["step"] for c in log.events("0", "checkpoint") if c["step"] >= checkpoint_at]
        steps = [p["step"] for p in log.events("0", "progress")]
        if checkpoints and steps and max(steps) >= max(checkpoints) + offset:
            return max(steps)
        return None

    kill_step = await wait_until(at_kill_point, profile.run_timeout, interval=0.05)
    killed = None
    if kill_step is None:
        driver.stall(f"{name}: training did not reach step {checkpoint_at}+{offset}")
    else:
        node = int(victim.rsplit("-", 1)[1])
        pod = await api.get("Pod", f"{name}-node-{node}")
        pid = victim_pid(pod, victim) if pod else None
        if pid is None:
            driver.stall(f"{name}: no single {victim} process found")
        else:
            os.kill(pid, signal.SIGKILL)
            killed = pid
            driver.say(f"{name}: SIGKILLed {victim} (pid {pid}) at step {kill_step}")
    async def restarted():
        pods = await api.list("Pod", f"pinery.dev/job-name={name}")
        return any((p["metadata"].get("labels") or {}).get("pinery.dev/attempt") == "1" for p in pods)

    on_disk = None
    if killed is not None and await wait_until(restarted, profile.run_timeout, interval=0.1):
        # the pod runner keeps its state (volumes included) under state_dir/pods
        on_disk = newest_complete_checkpoint(claim_dir(cluster.state_dir / "pods", NAMESPACE, f"{name}-checkpoints"))
    await driver.job_phase(name, "Succeeded", "Failed")
    await log.read()
    stop.set()
    await follower
    job = await api.get("FSDPJob", name)
    pods = await api.list("Pod", f"pinery.dev/job-name={name}")
    numbers, violations = check_run(log, job, pods, kill_step, on_disk, profile)
    if killed is None:
        violations.insert(0, "nothing was killed")
    return {"job": name, "victim": victim, **numbers, "violations": violations}


async def run_training_faults(cluster: LocalCluster, profile: Profile, seed: int) -> dict[str, Any]:
    client = KubeClient.from_kubeconfig(cluster.kubeconfig)
    api = Api(client, NAMESPACE)
    driver = Driver(api, profile.run_timeout)
    rng = random.Random(seed)
    started = time.monotonic()
    runs = []
    try:
        await api.create_namespace()
        for i, victim in enumerate(profile.victims):
            run = await one_run(cluster, api, driver, f"train-{i}-{victim}", victim, rng, profile)
            driver.say(f"{run['job']}: {json.dumps({k: v for k, v in run.items() if k != 'violations'})}")
            runs.append(run)
            await driver.delete("FSDPJob", run["job"])
        events = await api.list("Event")
    finally:
        await client.close()
    violations = [f"{r['job']}: {v}" for r in runs for v in r["violations"]] + driver.stalls
    operator_log = (cluster.state_dir / "operator.log").read_text(errors="replace")
    leaks = secret_leaks(cluster.state.api_key, {"the operator's log": operator_log, "Events": repr(events)})
    violations += [f"the API key appears in {where}" for where in leaks]
    return {
        "seed": seed,
        "kills": sum(1 for r in runs if "nothing was killed" not in r["violations"]),
        "runs": runs,
        "violations": violations,
        "seconds": round(time.monotonic() - started, 1),
    }
