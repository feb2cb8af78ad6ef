"""The pod runner runs what a pod declares: init containers, commands, environment, volumes."""

from __future__ import annotations

import base64
from pathlib import Path

from tests.integration.conftest_podrunner import (
    container_status,
    create,
    pod_log,
    pod_manifest,
    wait_for_phase,
    wait_for_pod,
    wait_gone,
)


def config_objects(plane):
    create(plane, {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "settings"},
                   "data": {"mode": "fast", "app.conf": "threads=4\n"}})
    create(plane, {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "creds"},
                   "data": {"token": base64.b64encode(b"t0ps3cret").decode()}})


def test_init_containers_run_in_order_before_the_containers(pod_runner):
    plane = pod_runner.plane

    def step(n):
        return {"name": f"init-{n}", "image": "busybox", "command": ["sh", "-c", f"echo {n} >> /work/order"],
                "volumeMounts": [{"name": "work", "mountPath": "/work"}]}

    pod = pod_manifest("ordered", ["sh", "-c", "cat /work/order; echo main"],
                       volumeMounts=[{"name": "work", "mountPath": "/work"}])
    pod["spec"]["initContainers"] = [step(1), step(2), step(3)]
    pod["spec"]["volumes"] = [{"name": "work", "emptyDir": {}}]
    create(plane, pod)

    done = wait_for_phase(plane, "ordered", "Succeeded")
    assert pod_log(plane, "ordered", "main").split() == ["1", "2", "3", "main"]
    assert [cs["name"] for cs in done["status"]["initContainerStatuses"]] == ["init-1", "init-2", "init-3"]
    for cs in done["status"]["initContainerStatuses"]:
        assert cs["state"]["terminated"]["exitCode"] == 0 and cs["state"]["terminated"]["reason"] == "Completed"
    conditions = {c["type"]: c["status"] for c in done["status"]["conditions"]}
    assert conditions == {"PodScheduled": "True", "Initialized": "True", "ContainersReady": "False", "Ready": "False"}
    assert done["spec"]["nodeName"] == "pinery-local"


def test_a_failing_init_container_fails_the_pod_and_its_containers_never_start(pod_runner):
    plane = pod_runner.plane
    pod = pod_manifest("blocked", ["sh", "-c", "echo should-not-run"])
    pod["spec"]["initContainers"] = [{"name": "check", "image": "busybox", "command": ["sh", "-c", "exit 4"]}]
    create(plane, pod)
    failed = wait_for_phase(plane, "blocked", "Failed")
    assert container_status(failed, "check", init=True)["state"]["terminated"]["exitCode"] == 4
    assert "waiting" in container_status(failed)["state"]


def test_command_args_environment_and_working_dir(pod_runner, tmp_path):
    plane = pod_runner.plane
    config_objects(plane)
    script = (
        'echo "args=$0,$1"; echo "pwd=$(pwd)"; '
        'for v in GREETING COMBINED POD_NAME POD_NAMESPACE POD_IP NODE ROLE TOKEN MODE CFG_mode OPTIONAL; do '
        'echo "$v=$(printenv $v)"; done'
    )
    pod = pod_manifest(
        "env", ["sh", "-c", script], args=["$(GREETING)", "$$(GREETING)"],
        workingDir=str(tmp_path),
        env=[
            {"name": "GREETING", "value": "hello"},
            {"name": "COMBINED", "value": "$(GREETING)-world"},
            {"name": "POD_NAME", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}},
            {"name": "POD_NAMESPACE", "valueFrom": {"fieldRef": {"fieldPath": "metadata.namespace"}}},
            {"name": "POD_IP", "valueFrom": {"fieldRef": {"fieldPath": "status.podIP"}}},
            {"name": "NODE", "valueFrom": {"fieldRef": {"fieldPath": "spec.nodeName"}}},
            {"name": "ROLE", "valueFrom": {"fieldRef": {"fieldPath": "metadata.labels['role']"}}},
            {"name": "TOKEN", "valueFrom": {"secretKeyRef": {"name": "creds", "key": "token"}}},
            {"name": "MODE", "valueFrom": {"configMapKeyRef": {"name": "settings", "key": "mode"}}},
            {"name": "OPTIONAL", "valueFrom": {"secretKeyRef": {"name": "absent", "key": "x", "optional": True}}},
        ],
        envFrom=[{"configMapRef": {"name": "settings"}, "prefix": "CFG_"}],
    )
    pod["metadata"]["labels"] = {"role": "worker"}
    create(plane, pod)

    done = wait_for_phase(plane, "env", "Succeeded")
    lines = dict(line.split("=", 1) for line in pod_log(plane, "env").splitlines())
    assert lines == {
        "args": "hello,$(GREETING)", "pwd": str(tmp_path), "GREETING": "hello", "COMBINED": "hello-world",
        "POD_NAME": "env", "POD_NAMESPACE": "default", "POD_IP": done["status"]["podIP"], "NODE": "pinery-local",
        "ROLE": "worker", "TOKEN": "t0ps3cret", "MODE": "fast", "CFG_mode": "fast", "OPTIONAL": "",
    }


def test_a_missing_config_map_holds_the_pod_until_it_exists(pod_runner):
    plane = pod_runner.plane
    pod = pod_manifest("needs-config", ["sh", "-c", "echo $MODE"],
                       env=[{"name": "MODE", "valueFrom": {"configMapKeyRef": {"name": "later", "key": "mode"}}}])
    create(plane, pod)
    waiting = wait_for_pod(plane, "needs-config",
                           lambda p: (container_status(p)["state"].get("waiting") or {}).get("reason") == "CreateContainerConfigError"
                           if p["status"].get("containerStatuses") else False, "CreateContainerConfigError")
    assert waiting["status"]["phase"] == "Pending"
    assert 'configmap "later" not found' in container_status(waiting)["state"]["waiting"]["message"]
    create(plane, {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "later"}, "data": {"mode": "ok"}})
    wait_for_phase(plane, "needs-config", "Succeeded")
    assert pod_log(plane, "needs-config") == "ok\n"


def test_volumes_are_local_directories_at_their_mount_paths(pod_runner):
    plane = pod_runner.plane
    config_objects(plane)
    create(plane, {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": "data"},
                   "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}})
    script = (
        "cat /etc/app/app.conf /etc/app/mode; echo; cat /var/run/creds/token; echo; "
        "cat /etc/podinfo/labels; echo; cat /etc/podinfo/name; echo; "
        "echo shm > /dev/shm/probe && cat /dev/shm/probe; "
        "echo scratch > /scratch/file && cat /scratch/file; "
        "n=$(cat /data/count 2>/dev/null || echo 0); echo $((n + 1)) > /data/count; "
        "echo count=$(cat /data/count); echo DATA_DIR=$DATA_DIR"
    )
    mounts = [
        {"name": "config", "mountPath": "/etc/app"},
        {"name": "creds", "mountPath": "/var/run/creds", "readOnly": True},
        {"name": "podinfo", "mountPath": "/etc/podinfo"},
        {"name": "dshm", "mountPath": "/dev/shm"},
        {"name": "scratch", "mountPath": "/scratch"},
        {"name": "data", "mountPath": "/data"},
    ]
    volumes = [
        {"name": "config", "configMap": {"name": "settings"}},
        {"name": "creds", "secret": {"secretName": "creds", "defaultMode": 0o400}},
        {"name": "podinfo", "downwardAPI": {"items": [
            {"path": "labels", "fieldRef": {"fieldPath": "metadata.labels"}},
            {"path": "name", "fieldRef": {"fieldPath": "metadata.name"}},
        ]}},
        {"name": "dshm", "emptyDir": {"medium": "Memory", "sizeLimit": "64Mi"}},
        {"name": "scratch", "emptyDir": {}},
        {"name": "data", "persistentVolumeClaim": {"claimName": "data"}},
    ]

    def run(name: str) -> str:
        pod = pod_manifest(name, ["sh", "-c", script], volumeMounts=mounts, env=[{"name": "DATA_DIR", "value": "/data"}])
        pod["metadata"]["labels"] = {"app": "volumes"}
        pod["spec"]["volumes"] = volumes
        create(plane, pod)
        wait_for_phase(plane, name, "Succeeded")
        return pod_log(plane, name)

    out = run("vol-1").splitlines()
    assert out[:7] == ["threads=4", "fast", "t0ps3cret", 'app="volumes"', "vol-1", "shm", "scratch"]
    assert out[7] == "count=1"
    data_dir = Path(out[8].split("=", 1)[1])
    assert data_dir.is_dir() and (data_dir / "count").read_text().strip() == "1"
    assert not Path("/dev/shm/probe").exists() or Path("/dev/shm/probe").read_text() != "shm\n"

    # The claim outlives the pod; the pod's own volumes do not.
    pod_dir = next((pod_runner.state_dir / "pods" / "default").glob("vol-1-*"))
    assert plane.http("DELETE", "/api/v1/namespaces/default/pods/vol-1").ok
    wait_gone(plane, "vol-1")
    assert "count=2" in run("vol-2")
    assert not pod_dir.exists()
    claim = plane.http("GET", "/api/v1/namespaces/default/persistentvolumeclaims/data").json()
    assert claim["status"]["phase"] == "Bound" and claim["status"]["capacity"] == {"storage": "1Gi"}


def test_an_executable_that_is_not_installed_is_a_start_error(pod_runner):
    plane = pod_runner.plane
    create(plane, pod_manifest("no-binary", ["definitely-not-installed-anywhere", "--flag"]))
    failed = wait_for_phase(plane, "no-binary", "Failed")
    terminated = container_status(failed)["state"]["terminated"]
    assert terminated["reason"] == "StartError" and terminated["exitCode"] == 128
    assert "definitely-not-installed-anywhere" in terminated["message"]


def test_a_container_without_a_command_cannot_be_created(pod_runner):
    plane = pod_runner.plane
    pod = pod_manifest("no-command", ["x"])
    del pod["spec"]["containers"][0]["command"]
    create(plane, pod)
    waiting = wait_for_pod(plane, "no-command", lambda p: bool(p["status"].get("containerStatuses"))
                           and "CreateContainerError" in str(container_status(p)["state"]), "CreateContainerError")
    assert waiting["status"]["phase"] == "Pending"
    assert "no command" in container_status(waiting)["state"]["waiting"]["message"]


def test_termination_messages_from_the_file_or_the_end_of_the_log(pod_runner):
    plane = pod_runner.plane
    create(plane, pod_manifest("msg-file", ["sh", "-c", "echo 'all done' > /dev/termination-log"]))
    create(plane, pod_manifest("msg-log", ["sh", "-c", "for i in $(seq 1 100); do echo line-$i; done; exit 3"],
                               terminationMessagePolicy="FallbackToLogsOnError"))
    create(plane, pod_manifest("msg-none", ["sh", "-c", "echo not-a-message; exit 2"]))
    assert container_status(wait_for_phase(plane, "msg-file", "Succeeded"))["state"]["terminated"]["message"] == "all done\n"
    from_log = container_status(wait_for_phase(plane, "msg-log", "Failed"))["state"]["terminated"]
    lines = from_log["message"].splitlines()
    assert from_log["exitCode"] == 3 and lines[-1] == "line-100" and len(lines) == 80
    assert "message" not in container_status(wait_for_phase(plane, "msg-none", "Failed"))["state"]["terminated"]


def test_a_working_dir_that_is_not_on_this_machine_is_made_for_the_pod(pod_runner):
    plane = pod_runner.plane
    missing = "/srv/pinery-test-app"
    assert not Path(missing).exists()
    create(plane, pod_manifest("workdir", ["sh", "-c", "pwd; touch made-here"], workingDir=missing))
    wait_for_phase(plane, "workdir", "Succeeded")
    cwd = Path(pod_log(plane, "workdir").strip())
    assert cwd.parts[-3:] == ("rootfs", "srv", "pinery-test-app") and (cwd / "made-here").exists()
    assert not Path(missing).exists()
