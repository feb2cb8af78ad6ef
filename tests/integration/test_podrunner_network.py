"""Pods get loopback addresses, and reach each other by the names they would use in a cluster."""

from __future__ import annotations

import ipaddress
import json
import textwrap

from tests.integration.conftest_podrunner import create, pod_log, pod_manifest, wait_for_phase
from tests.support.ports import free_port

ECHO_SERVER = textwrap.dedent("""
    import os, socket, sys
    port, count = int(sys.argv[1]), int(sys.argv[2])
    server = socket.create_server((os.environ["POD_IP"], port))
    print("listening", flush=True)
    for _ in range(count):
        conn, peer = server.accept()
        with conn:
            data = conn.recv(1024)
            conn.sendall(data)
            print("echoed", data.decode(), flush=True)
""")

ECHO_CLIENT = textwrap.dedent("""
    import json, socket, sys, time
    # Names arrive with "/" for "." (names in arguments would be replaced by their addresses).
    port, names = int(sys.argv[1]), [name.replace("/", ".") for name in sys.argv[2:]]
    results = {}
    for name in names:
        deadline = time.monotonic() + 20
        while True:
            try:
                with socket.create_connection((name, port), timeout=2) as conn:
                    conn.sendall(name.encode())
                    results[name] = [conn.recv(1024).decode(), conn.getpeername()[0], sorted(socket.gethostbyname_ex(name)[2])]
                    break
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.1)
    print(json.dumps(results), flush=True)
""")


def member(name: str, command: list[str], *, env: list[dict] | None = None) -> dict:
    pod = pod_manifest(name, command, env=[{"name": "POD_IP", "valueFrom": {"fieldRef": {"fieldPath": "status.podIP"}}}, *(env or [])])
    pod["metadata"]["labels"] = {"app": "echo", "role": name}
    pod["spec"].update({"hostname": name, "subdomain": "echo"})
    return pod


def test_pods_reach_each_other_by_pod_and_service_names(pod_runner):
    """A two-pod job: a server and a client that finds it by every form of its DNS names."""
    plane = pod_runner.plane
    port = free_port()
    create(plane, {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "echo"},
                   "spec": {"clusterIP": "None", "selector": {"role": "server"}, "ports": [{"port": port}]}})
    names = [
        "server.echo", "server.echo.default", "server.echo.default.svc", "server.echo.default.svc.cluster.local",
        "echo", "echo.default", "echo.default.svc", "echo.default.svc.cluster.local",
    ]
    create(plane, member("server", ["python", "-c", ECHO_SERVER, str(port), str(len(names) + 1)]))
    create(plane, member("client", ["python", "-c", ECHO_CLIENT, str(port), *(name.replace(".", "/") for name in names)]))
    # Outside Python, names in arguments and host variables are given as addresses.
    create(plane, member("shell", ["bash", "-c", 'until exec 3<>"/dev/tcp/$1/$2"; do sleep 0.1; done 2>/dev/null; '
                                   'echo -n shell >&3; head -c 5 <&3; echo; echo "$PEER"',
                                   "sh", "server.echo.default.svc.cluster.local", str(port)],
                         env=[{"name": "PEER", "value": "http://server.echo:8080/x"}]))

    client = wait_for_phase(plane, "client", "Succeeded", "Failed", timeout=30)
    assert client["status"]["phase"] == "Succeeded", pod_log(plane, "client")
    shell = wait_for_phase(plane, "shell", "Succeeded", "Failed", timeout=30)
    assert shell["status"]["phase"] == "Succeeded", pod_log(plane, "shell")
    server = wait_for_phase(plane, "server", "Succeeded", timeout=30)

    server_ip = server["status"]["podIP"]
    ips = {server_ip, client["status"]["podIP"], shell["status"]["podIP"]}
    assert len(ips) == 3 and all(ipaddress.ip_address(ip).is_loopback for ip in ips)
    results = json.loads(pod_log(plane, "client").strip().splitlines()[-1])
    assert results == {name: [name, server_ip, [server_ip]] for name in names}
    assert pod_log(plane, "shell").splitlines() == ["shell", f"http://{server_ip}:8080/x"]
    assert sorted(pod_log(plane, "server").splitlines()[1:]) == sorted(f"echoed {name}" for name in [*names, "shell"])


def test_names_of_other_namespaces_and_unknown_names(pod_runner):
    plane = pod_runner.plane
    plane.http("POST", "/api/v1/namespaces", json={"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team"}})
    target = pod_manifest("target", ["sleep", "30"], namespace="team")
    target["spec"].update({"hostname": "target", "subdomain": "grp"})
    create(plane, target)
    probe = textwrap.dedent("""
        import socket, sys
        for name in (arg.replace("/", ".") for arg in sys.argv[1:]):
            try:
                print(name, socket.gethostbyname(name))
            except OSError:
                print(name, "unresolved")
    """)
    names = ["target.grp.team", "target.grp", "target.grp.team.svc.cluster.local", "no-such-pod.grp.team",
             "no-such-service.team.svc.cluster.local", "localhost"]
    create(plane, pod_manifest("probe", ["python", "-c", probe, *(name.replace(".", "/") for name in names)]))
    wait_for_phase(plane, "probe", "Succeeded")
    target_ip = wait_for_phase(plane, "target", "Running", namespace="team")["status"]["podIP"]
    resolved = dict(line.split() for line in pod_log(plane, "probe").splitlines())
    assert resolved == {
        "target.grp.team": target_ip,
        "target.grp": "unresolved",  # the short form works only inside namespace team
        "target.grp.team.svc.cluster.local": target_ip,
        "no-such-pod.grp.team": "unresolved",
        "no-such-service.team.svc.cluster.local": "unresolved",
        "localhost": "127.0.0.1",
    }
