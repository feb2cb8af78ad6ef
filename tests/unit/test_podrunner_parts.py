"""The pod runner's pure parts: cluster DNS, environment resolution, volumes and status."""

import base64
import socket
import subprocess
import sys

import pytest

from pinery.local.podrunner.dns import ClusterDNS, is_loopback, pod_ip
from pinery.local.podrunner.environment import EnvError, container_env, expand
from pinery.local.podrunner.status import ContainerRun, PodRun, phase_of, pod_status, termination_message
from pinery.local.podrunner.volumes import mount_map, prepare_volumes, rewrite_paths


def pod(name, ns="default", hostname=None, subdomain=None, labels=None, **spec):
    p = {"metadata": {"name": name, "namespace": ns, "uid": f"uid-{name}", "labels": labels or {}}, "spec": dict(spec)}
    if hostname:
        p["spec"]["hostname"] = hostname
    if subdomain:
        p["spec"]["subdomain"] = subdomain
    return p


# --- DNS -------------------------------------------------------------------------------

def test_pod_addresses_are_stable_loopback_and_distinct():
    a, b = pod_ip("default", "job-node-0"), pod_ip("default", "job-node-1")
    assert a == pod_ip("default", "job-node-0") and a != b
    assert is_loopback(a) and not a.startswith("127.0.")


def test_pod_names_resolve_with_the_search_path():
    dns = ClusterDNS()
    ip = dns.add_pod(pod("job-node-0", ns="team", hostname="job-node-0", subdomain="job", labels={"job": "job"}))
    for name in ("job-node-0.job.team.svc.cluster.local", "job-node-0.job.team.svc", "job-node-0.job.team"):
        assert dns.resolve(name, "other") == [ip]
    assert dns.resolve("job-node-0.job", "team") == [ip]
    assert dns.resolve("job-node-0.job", "other") == []


def ready(p):
    p["status"] = {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]}
    return p


def test_services_resolve_to_their_ready_pods():
    dns = ClusterDNS()
    p0, p1 = (dns.add_pod(ready(pod(f"p{i}", labels={"app": "x"}))) for i in range(2))
    ips = sorted([p0, p1])
    dns.add_pod(ready(pod("other", labels={"app": "y"})))
    starting = dns.add_pod(pod("starting", labels={"app": "x"}))
    dns.add_service({"metadata": {"name": "svc", "namespace": "default"}, "spec": {"selector": {"app": "x"}}})
    assert dns.resolve("svc", "default") == ips
    assert dns.hosts()["svc.default.svc.cluster.local"] == ips
    dns.remove_pod(pod("p0", labels={"app": "x"}))
    assert dns.resolve("svc.default", "x") == [p1]
    # publishNotReadyAddresses: pods count before they are ready (an FSDPJob's rendezvous).
    dns.add_service({"metadata": {"name": "svc", "namespace": "default"},
                     "spec": {"selector": {"app": "x"}, "publishNotReadyAddresses": True}})
    assert dns.resolve("svc", "default") == sorted([p1, starting])


def test_no_two_pods_share_an_address(monkeypatch):
    from pinery.local.podrunner import dns as dns_module

    real = dns_module.pod_ip
    # Make every pod hash to the same address unless salted.
    monkeypatch.setattr(dns_module, "pod_ip", lambda ns, name, salt=0: "127.100.0.1" if not salt else real(ns, name, salt))
    dns = ClusterDNS()
    a = dns.add_pod(pod("a"))
    b = dns.add_pod(pod("b"))
    assert a == "127.100.0.1" and b != a and dns.add_pod(pod("b")) == b
    dns.remove_pod(pod("a"))
    assert dns.add_pod(pod("c")) == "127.100.0.1"


def test_every_pod_shares_one_address_where_loopback_has_only_one():
    dns = ClusterDNS(shared_address="127.0.0.1")
    assert dns.add_pod(pod("a", hostname="a", subdomain="s")) == "127.0.0.1" == dns.resolve("a.s", "default")[0]


def test_rewriting_replaces_only_resolvable_names():
    dns = ClusterDNS()
    ip = dns.add_pod(pod("j-node-0", hostname="j-node-0", subdomain="j"))
    text = "--master j-node-0.j.default.svc.cluster.local:29500 pinery_trainer.smoke config.yaml"
    assert dns.rewrite(text, "default") == f"--master {ip}:29500 pinery_trainer.smoke config.yaml"
    env = dns.rewrite_env({"MASTER_ADDR": "j-node-0.j.default.svc.cluster.local", "PET_RDZV_ENDPOINT": "j-node-0.j:29400", "OTHER": "x"}, "default")
    assert env == {"MASTER_ADDR": ip, "PET_RDZV_ENDPOINT": f"{ip}:29400", "OTHER": "x"}


def test_resolver_hook_resolves_names_in_python_processes(tmp_path):
    from pinery.local.podrunner.runner import RESOLVER_DIR

    hosts = tmp_path / "hosts"
    hosts.write_text("j-node-0.j.default.svc.cluster.local 127.101.2.3\nsvc.default.svc.cluster.local 127.101.2.4 127.101.2.5\n")
    code = ("import socket; print(socket.gethostbyname('j-node-0.j.default.svc.cluster.local'), socket.getaddrinfo('j-node-0.j', 80)[0][4][0],"
            " *sorted({i[4][0] for i in socket.getaddrinfo('svc', 80)}))")
    out = subprocess.run(
        [sys.executable, "-c", code],
        env={"PYTHONPATH": str(RESOLVER_DIR), "PINERY_LOCAL_HOSTS": str(hosts), "PINERY_LOCAL_SEARCH": "default.svc.cluster.local"},
        capture_output=True, text=True, check=True,
    ).stdout.split()
    assert out == ["127.101.2.3", "127.101.2.3", "127.101.2.4", "127.101.2.5"]
    assert socket.gethostbyname("localhost").startswith("127.")


# --- environment ---------------------------------------------------------------------

OBJECTS = {
    ("ConfigMap", "cfg"): {"metadata": {"name": "cfg", "namespace": "default"}, "data": {"A": "1", "B": "2"}},
    ("Secret", "sec"): {"metadata": {"name": "sec", "namespace": "default"}, "data": {"KEY": base64.b64encode(b"s3cret").decode()}},
}


def lookup(kind, name):
    return OBJECTS.get((kind, name))


def test_container_env_resolves_every_source():
    container = {
        "envFrom": [{"configMapRef": {"name": "cfg"}, "prefix": "CFG_"}],
        "env": [
            {"name": "PLAIN", "value": "x"},
            {"name": "EXPANDED", "value": "$(PLAIN)-$(CFG_A)-$$(PLAIN)"},
            {"name": "POD", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}},
            {"name": "IP", "valueFrom": {"fieldRef": {"fieldPath": "status.podIP"}}},
            {"name": "LABEL", "valueFrom": {"fieldRef": {"fieldPath": "metadata.labels['app']"}}},
            {"name": "SECRET", "valueFrom": {"secretKeyRef": {"name": "sec", "key": "KEY"}}},
            {"name": "CM", "valueFrom": {"configMapKeyRef": {"name": "cfg", "key": "B"}}},
            {"name": "OPT", "valueFrom": {"secretKeyRef": {"name": "missing", "key": "K", "optional": True}}},
            {"name": "CPU", "valueFrom": {"resourceFieldRef": {"resource": "limits.cpu"}}},
        ],
        "resources": {"limits": {"cpu": "2"}},
    }
    env = container_env(pod("p", labels={"app": "web"}), container, lookup, pod_ip="127.100.0.1", node="n")
    assert env == {
        "CFG_A": "1", "CFG_B": "2", "PLAIN": "x", "EXPANDED": "x-1-$(PLAIN)", "POD": "p", "IP": "127.100.0.1",
        "LABEL": "web", "SECRET": "s3cret", "CM": "2", "CPU": "2",
    }


@pytest.mark.parametrize(
    "var, message",
    [
        ({"name": "X", "valueFrom": {"secretKeyRef": {"name": "missing", "key": "K"}}}, 'secret "missing" not found'),
        ({"name": "X", "valueFrom": {"configMapKeyRef": {"name": "cfg", "key": "NOPE"}}}, "couldn't find key NOPE"),
    ],
)
def test_missing_references_are_config_errors(var, message):
    with pytest.raises(EnvError, match=message):
        container_env(pod("p"), {"env": [var]}, lookup, pod_ip="", node="n")


def test_expand():
    assert expand("$(A)/$(B)", {"A": "1"}) == "1/$(B)"


# --- volumes ---------------------------------------------------------------------------

def test_volumes_and_mount_rewriting(tmp_path):
    p = pod("p", volumes=[
        {"name": "cfg", "configMap": {"name": "cfg", "items": [{"key": "A", "path": "conf/a.txt"}]}},
        {"name": "sec", "secret": {"secretName": "sec"}},
        {"name": "scratch", "emptyDir": {}},
        {"name": "ckpt", "persistentVolumeClaim": {"claimName": "ckpt"}},
    ])
    dirs = prepare_volumes(p, tmp_path / "pod", tmp_path / "state", lookup)
    assert (dirs["cfg"] / "conf/a.txt").read_text() == "1"
    assert (dirs["sec"] / "KEY").read_bytes() == b"s3cret"
    assert dirs["ckpt"] == tmp_path / "state" / "volumes" / "default" / "ckpt" and dirs["ckpt"].is_dir()
    mounts = mount_map({"volumeMounts": [
        {"name": "cfg", "mountPath": "/etc/app"},
        {"name": "ckpt", "mountPath": "/checkpoints/"},
        {"name": "scratch", "mountPath": "/etc/app/cache"},
    ]}, dirs)
    assert rewrite_paths("--config /etc/app/conf/a.txt", mounts) == f"--config {dirs['cfg']}/conf/a.txt"
    assert rewrite_paths("/etc/app/cache/x", mounts) == f"{dirs['scratch']}/x"
    assert rewrite_paths("DIR=/checkpoints", mounts) == f"DIR={dirs['ckpt']}"
    assert rewrite_paths("/checkpointsX /etc/apps", mounts) == "/checkpointsX /etc/apps"


def test_memory_backed_empty_dir_lives_in_shared_memory(tmp_path):
    dirs = prepare_volumes(pod("p", volumes=[{"name": "dshm", "emptyDir": {"medium": "Memory", "sizeLimit": "1Gi"}}]), tmp_path, tmp_path, lookup)
    assert str(dirs["dshm"]).startswith("/dev/shm/") or str(dirs["dshm"]).startswith(str(tmp_path))
    assert dirs["dshm"].is_dir()


def test_missing_config_map_volume_is_a_config_error(tmp_path):
    with pytest.raises(EnvError, match='configmap "nope" not found'):
        prepare_volumes(pod("p", volumes=[{"name": "v", "configMap": {"name": "nope"}}]), tmp_path, tmp_path, lookup)


# --- status ----------------------------------------------------------------------------

def run_with(init=(), main=()):
    return PodRun(init=[ContainerRun(n, state=s, exit_code=c) for n, s, c in init],
                  main=[ContainerRun(n, state=s, exit_code=c) for n, s, c in main], pod_ip="127.100.0.1")


@pytest.mark.parametrize(
    "run, policy, phase",
    [
        (run_with(main=[("a", "waiting", None)]), "Never", "Pending"),
        (run_with(init=[("i", "running", None)], main=[("a", "waiting", None)]), "Never", "Pending"),
        (run_with(init=[("i", "terminated", 1)], main=[("a", "waiting", None)]), "Never", "Failed"),
        (run_with(init=[("i", "terminated", 0)], main=[("a", "running", None)]), "Never", "Running"),
        (run_with(main=[("a", "terminated", 0), ("b", "running", None)]), "Never", "Running"),
        (run_with(main=[("a", "terminated", 0), ("b", "terminated", 0)]), "Never", "Succeeded"),
        (run_with(main=[("a", "terminated", 0), ("b", "terminated", 2)]), "Never", "Failed"),
        (run_with(main=[("a", "terminated", 2)]), "OnFailure", "Running"),
        (run_with(main=[("a", "terminated", 0)]), "Always", "Running"),
    ],
)
def test_phase(run, policy, phase):
    assert phase_of(run, policy) == phase


def test_status_document():
    run = run_with(main=[("train", "terminated", 3)])
    run.main[0].reason = "Error"
    status = pod_status(run, "Never", "2026-11-30T00:00:00Z")
    assert status["phase"] == "Failed" and status["podIP"] == "127.100.0.1"
    cs = status["containerStatuses"][0]
    assert cs["state"]["terminated"]["exitCode"] == 3 and cs["state"]["terminated"]["reason"] == "Error"
    assert {c["type"]: c["status"] for c in status["conditions"]}["Ready"] == "False"
    assert "initContainerStatuses" not in status


def test_conditions_keep_their_transition_times_while_unchanged():
    run = run_with(main=[("a", "running", None)])
    first = pod_status(run, "Never", "2026-01-01T00:00:00Z")
    run.main[0].state, run.main[0].exit_code = "terminated", 0
    second = pod_status(run, "Never", "2026-01-01T00:01:00Z", first["conditions"])
    times = {c["type"]: c["lastTransitionTime"] for c in second["conditions"]}
    assert times == {"PodScheduled": "2026-01-01T00:00:00Z", "Initialized": "2026-01-01T00:00:00Z",
                     "ContainersReady": "2026-01-01T00:01:00Z", "Ready": "2026-01-01T00:01:00Z"}


def test_back_off_keeps_the_last_run_and_counts_the_restart():
    c = ContainerRun("a", state="running", started_at="t0", pid=7)
    c.finish(2, "t1")
    assert (c.state, c.exit_code, c.reason) == ("terminated", 2, "Error")
    c.back_off()
    status = c.to_status(ready=False)
    assert status["state"]["waiting"]["reason"] == "CrashLoopBackOff" and status["restartCount"] == 1
    assert status["lastState"]["terminated"] == {"exitCode": 2, "reason": "Error", "startedAt": "t0", "finishedAt": "t1",
                                                 "containerID": "local://7"}
    c.fail_to_start("t2", "exec: nope")
    assert c.to_status(False)["state"]["terminated"]["reason"] == "StartError" and c.exit_code == 128


@pytest.mark.parametrize(
    "written, policy, code, expected",
    [
        ("done\n", "File", 0, "done\n"),
        ("done\n", "FallbackToLogsOnError", 1, "done\n"),
        ("", "File", 1, ""),
        ("", "FallbackToLogsOnError", 0, ""),
        ("", "FallbackToLogsOnError", 1, "".join(f"l{i}\n" for i in range(21, 101))),
        ("x" * 5000, "File", 0, "x" * 4096),
    ],
)
def test_termination_message(written, policy, code, expected):
    log = "".join(f"l{i}\n" for i in range(1, 101)).encode()
    assert termination_message(written, log, policy, code) == expected


def test_the_log_fallback_is_at_most_2_kib():
    assert len(termination_message("", b"y" * 10000 + b"\n", "FallbackToLogsOnError", 1)) == 2048


def test_downward_api_and_projected_volumes(tmp_path):
    p = pod("p", labels={"app": "web", "tier": "a"}, volumes=[
        {"name": "info", "downwardAPI": {"items": [
            {"path": "labels", "fieldRef": {"fieldPath": "metadata.labels"}},
            {"path": "ip", "fieldRef": {"fieldPath": "status.podIP"}, "mode": 0o600},
        ]}},
        {"name": "all", "projected": {"defaultMode": 0o440, "sources": [
            {"configMap": {"name": "cfg", "items": [{"key": "A", "path": "a"}]}},
            {"secret": {"name": "sec"}},
            {"downwardAPI": {"items": [{"path": "name", "fieldRef": {"fieldPath": "metadata.name"}}]}},
            {"serviceAccountToken": {"path": "token"}},
        ]}},
    ])
    dirs = prepare_volumes(p, tmp_path / "pod", tmp_path, lookup, pod_ip="127.100.0.9", node="n")
    assert (dirs["info"] / "labels").read_text() == 'app="web"\ntier="a"'
    assert (dirs["info"] / "ip").read_text() == "127.100.0.9" and (dirs["info"] / "ip").stat().st_mode & 0o777 == 0o600
    assert {f.name for f in dirs["all"].iterdir()} == {"a", "KEY", "name"}
    assert (dirs["all"] / "KEY").read_bytes() == b"s3cret" and (dirs["all"] / "a").stat().st_mode & 0o777 == 0o440


def test_a_missing_key_of_a_config_map_volume_is_a_config_error(tmp_path):
    volume = {"name": "v", "configMap": {"name": "cfg", "items": [{"key": "NOPE", "path": "x"}]}}
    with pytest.raises(EnvError, match="couldn't find key NOPE"):
        prepare_volumes(pod("p", volumes=[volume]), tmp_path, tmp_path, lookup)
    volume["configMap"]["optional"] = True
    assert not (prepare_volumes(pod("p", volumes=[volume]), tmp_path, tmp_path, lookup)["v"] / "x").exists()


def test_a_lost_container_is_terminated_with_reason_unknown():
    from pinery.local.podrunner.runner import _lost

    running = {"name": "a", "state": {"running": {"startedAt": "t0"}}, "ready": True, "started": True}
    lost = _lost(running)
    assert lost["state"]["terminated"]["reason"] == "Unknown" and lost["state"]["terminated"]["exitCode"] == 137
    assert lost["state"]["terminated"]["startedAt"] == "t0" and not lost["ready"]
    done = {"name": "a", "state": {"terminated": {"exitCode": 0}}}
    assert _lost(done) == done


def test_resolver_hook_sees_every_change_of_the_hosts_file(tmp_path):
    """Changes within one timestamp tick are not missed, and unknown cluster names fail fast."""
    from pinery.local.podrunner.runner import RESOLVER_DIR

    hosts = tmp_path / "hosts"
    hosts.write_text("a.s.default.svc.cluster.local 127.101.0.1\n")
    code = (
        "import os, socket, sys\n"
        "print(socket.gethostbyname('a.s'))\n"
        "tmp = sys.argv[1] + '.tmp'\n"
        "open(tmp, 'w').write('a.s.default.svc.cluster.local 127.101.0.1\\nb.s.default.svc.cluster.local 127.101.0.2\\n')\n"
        "st = os.stat(sys.argv[1]); os.replace(tmp, sys.argv[1]); os.utime(sys.argv[1], ns=(st.st_atime_ns, st.st_mtime_ns))\n"
        "print(socket.gethostbyname('b.s'))\n"
        "try:\n    socket.getaddrinfo('c.s.default.svc.cluster.local', 80)\nexcept socket.gaierror as e:\n    print(e.errno == socket.EAI_NONAME)\n"
    )
    env = {"PYTHONPATH": str(RESOLVER_DIR), "PINERY_LOCAL_HOSTS": str(hosts), "PINERY_LOCAL_DOMAIN": "cluster.local",
           "PINERY_LOCAL_SEARCH": "default.svc.cluster.local svc.cluster.local cluster.local"}
    out = subprocess.run([sys.executable, "-c", code, str(hosts)], env=env, capture_output=True, text=True, check=True).stdout
    assert out.split() == ["127.101.0.1", "127.101.0.2", "True"]


# --- forgetting a pod ------------------------------------------------------------------

def test_a_forgotten_pod_leaves_the_logs_of_a_newer_pod_of_the_same_name(tmp_path):
    """After a gang restart the new pod has the old one's name, and logs are kept by name: the
    old pod's removal, when it comes late, must not take the new pod's logs with it."""
    import asyncio

    from pinery.local.podrunner.runner import PodRunner, Worker

    runner = PodRunner(client=None, state_dir=tmp_path / "pods", logs_dir=tmp_path / "logs")
    old, new = pod("job-node-1"), pod("job-node-1")
    new["metadata"]["uid"] = "uid-newer"
    runner.workers = {"uid-job-node-1": Worker(old), "uid-newer": Worker(new)}
    log = tmp_path / "logs" / "default" / "job-node-1" / "trainer.log"
    log.parent.mkdir(parents=True)
    log.write_text("the newer pod's output\n")
    asyncio.run(runner._forget(runner.workers["uid-job-node-1"], grace=0))
    assert log.read_text() == "the newer pod's output\n" and list(runner.workers) == ["uid-newer"]
    asyncio.run(runner._forget(runner.workers["uid-newer"], grace=0))
    assert not log.exists() and runner.workers == {}
