"""The children builders over many job shapes, each object checked against Kubernetes' schemas."""

from __future__ import annotations

import dataclasses

import pytest
import yaml

from pinery.api import FSDPJobSpec
from pinery.fsdpjob import JobRef, build_children, build_config_map, build_pod, build_service
from pinery.fsdpjob.children import DEFAULT_COMMAND
from pinery.fsdpjob.naming import master_addr, pod_fqdn
from pinery.fsdpjob.nproc import gpu_count, nproc_per_node, quantity_value
from pinery.fsdpjob.placement import Placement
from pinery_trainer.config import TrainerConfig
from tests.support.k8s import assert_valid
from tests.unit.fsdpjob.cluster import SETTINGS

JOB = JobRef("train", "ml", "uid-7")
ADDR = "train-node-0.train.ml.svc.cluster.local"


def spec(**fields) -> FSDPJobSpec:
    return FSDPJobSpec.model_validate({"numNodes": 2, **fields})


def env_of(pod: dict) -> dict[str, str]:
    return {e["name"]: e.get("value") for e in pod["spec"]["containers"][0]["env"]}


def children(s: FSDPJobSpec) -> list[dict]:
    objs = build_children(JOB, s, SETTINGS)
    for obj in objs:
        assert_valid(obj)
    return objs


GPU = {"limits": {"nvidia.com/gpu": 4}, "requests": {"nvidia.com/gpu": "4"}}


@pytest.mark.parametrize("nodes", [1, 2, 8])
@pytest.mark.parametrize(
    "nproc, resources, expected",
    [
        (1, None, 1),
        (4, None, 4),
        ("auto", None, 1),
        ("auto", GPU, 4),
        ("auto", {"limits": {"amd.com/gpu": "8"}}, 8),
        ("auto", {"requests": {"cpu": "16"}}, 1),
    ],
    ids=["1", "4", "auto-cpu", "auto-4gpu", "auto-amd8", "auto-cpu-requests"],
)
def test_static_rendezvous_env_for_every_shape(nodes, nproc, resources, expected):
    s = spec(numNodes=nodes, nprocPerNode=nproc, **({"resources": resources} if resources else {}))
    objs = children(s)
    pods = [o for o in objs if o["kind"] == "Pod"]
    assert [p["metadata"]["name"] for p in pods] == [f"train-node-{i}" for i in range(nodes)]
    for rank, pod in enumerate(pods):
        env = env_of(pod)
        assert env["MASTER_ADDR"] == env["PET_MASTER_ADDR"] == ADDR
        assert env["MASTER_PORT"] == env["PET_MASTER_PORT"] == "29500"
        assert env["NNODES"] == env["PET_NNODES"] == str(nodes)
        assert env["NODE_RANK"] == env["PET_NODE_RANK"] == str(rank)
        assert env["NPROC_PER_NODE"] == env["PET_NPROC_PER_NODE"] == str(expected)
        assert env["WORLD_SIZE"] == str(nodes * expected)
        assert env["PET_MAX_RESTARTS"] == "0" and env["PYTHONUNBUFFERED"] == "1"
        assert "PET_RDZV_BACKEND" not in env and "TORCH_DISABLE_SHARE_RDZV_TCP_STORE" not in env
        if expected == 1:
            assert (env["RANK"], env["LOCAL_RANK"], env["LOCAL_WORLD_SIZE"]) == (str(rank), "0", "1")
        else:
            assert "RANK" not in env and "LOCAL_RANK" not in env
        # Identical in meaning on every node: only the rank differs.
        differing = {k for k, v in env.items() if v != env_of(pods[0])[k]}
        assert differing <= {"NODE_RANK", "PET_NODE_RANK", "RANK"}


STORE = "train-rendezvous.train.ml.svc.cluster.local"
ELASTIC = {"minNodes": 2, "maxNodes": 5, "maxRestarts": 7}


def test_elastic_uses_c10d_on_the_store_pod_with_a_run_per_gang_and_safe_store_settings():
    s = spec(numNodes=3, nprocPerNode=2, elastic=ELASTIC, startupTimeoutSeconds=900)
    pod = [o for o in children(s) if o["kind"] == "Pod" and o["metadata"]["name"] == "train-node-1"][0]
    env = env_of(pod)
    assert env["PET_NNODES"] == "2:5" and env["PET_RDZV_BACKEND"] == "c10d"
    # The store pod, never a training node, and a run of this gang's own (attempt 0).
    assert env["PET_RDZV_ENDPOINT"] == f"{STORE}:29500" and env["PET_RDZV_ID"] == "uid-7-0"
    assert env["PET_MAX_RESTARTS"] == "7" and env["TORCH_DISABLE_SHARE_RDZV_TCP_STORE"] == "1"
    assert env["PET_RDZV_CONF"] == "join_timeout=900,read_timeout=900,is_host=false"
    assert env["NPROC_PER_NODE"] == env["PET_NPROC_PER_NODE"] == "2"


# Issue 19 item 4: what membership changes make false is not set at all; what was configured
# is there under names that say so.
STALE = {"WORLD_SIZE", "NNODES", "NODE_RANK", "RANK", "LOCAL_RANK", "LOCAL_WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT",
         "PET_NODE_RANK", "PET_MASTER_ADDR", "PET_MASTER_PORT"}


@pytest.mark.parametrize("nodes, nproc, elastic, configured", [
    (3, 2, ELASTIC, {"PINERY_NUM_NODES": "3", "PINERY_MIN_NODES": "2", "PINERY_MAX_NODES": "5"}),
    (4, 1, {"minNodes": 1}, {"PINERY_NUM_NODES": "4", "PINERY_MIN_NODES": "1", "PINERY_MAX_NODES": "4"}),
    (2, "auto", {"minNodes": 2}, {"PINERY_NUM_NODES": "2", "PINERY_MIN_NODES": "2", "PINERY_MAX_NODES": "2"}),
], ids=["max-nodes", "max-defaults-to-num", "fixed-size"])
def test_elastic_pods_get_no_value_that_membership_makes_false(nodes, nproc, elastic, configured):
    pods = [o for o in children(spec(numNodes=nodes, nprocPerNode=nproc, elastic=elastic)) if o["metadata"].get("labels", {}).get("pinery.dev/node-rank")]
    assert len(pods) == nodes
    for index, pod in enumerate(pods):
        env = env_of(pod)
        assert not STALE & env.keys(), STALE & env.keys()
        assert {k: env[k] for k in configured} == configured
        assert env["PINERY_POD_INDEX"] == str(index)
        # Identical in meaning on every node: only the index differs.
        assert {k for k, v in env.items() if v != env_of(pods[0])[k]} <= {"PINERY_POD_INDEX"}


def test_elastic_read_timeout_has_a_floor():
    env = env_of(build_pod(JOB, spec(numNodes=1, nprocPerNode=1, elastic={"minNodes": 1}, startupTimeoutSeconds=30), 0, 0, SETTINGS))
    assert env["PET_RDZV_CONF"] == "join_timeout=600,read_timeout=300,is_host=false" and env["PET_NNODES"] == "1:1"
    assert "RANK" not in env  # the rendezvous assigns ranks in elastic mode


def test_a_node_joins_the_run_it_is_given_else_its_own_gangs():
    s = spec(numNodes=3, elastic={"minNodes": 2})
    assert env_of(build_pod(JOB, s, 2, 5, SETTINGS))["PET_RDZV_ID"] == "uid-7-5"
    joining = build_pod(JOB, s, 2, 5, SETTINGS, run_id="uid-7-3")
    assert env_of(joining)["PET_RDZV_ID"] == "uid-7-3" and env_of(joining)["PINERY_ATTEMPT"] == "5"


def test_every_elastic_node_rank_0_included_waits_for_the_store_not_for_rank_0():
    s = spec(numNodes=3, elastic={"minNodes": 2}, startupTimeoutSeconds=240, masterPort=1234)
    for rank in range(3):
        (init,) = build_pod(JOB, s, rank, 0, SETTINGS)["spec"]["initContainers"]
        assert init["name"] == "wait-for-rendezvous" and init["image"] == "op:test"
        assert init["command"] == ["pinery", "wait-for", f"{STORE}:1234", "--timeout", "240"]


def test_the_store_pod_of_an_elastic_job():
    template = {"nodeSelector": {"pool": "gpu"}, "tolerations": [{"key": "gpu", "operator": "Exists"}],
                "imagePullSecrets": [{"name": "regcred"}], "schedulerName": "volcano", "priorityClassName": "high",
                "affinity": {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
                    {"topologyKey": "kubernetes.io/hostname", "labelSelector": {"matchLabels": {"pinery.dev/job-name": "train"}}}]}}}
    s = spec(numNodes=2, elastic={"minNodes": 1}, masterPort=23456, image="me/train:1", command=["torchrun", "t.py"], podTemplate=template)
    objs = children(s)
    kinds = [(o["kind"], o["metadata"]["name"]) for o in objs]
    # Created before the nodes, which wait for it.
    assert kinds == [("Service", "train"), ("Pod", "train-rendezvous"), ("Pod", "train-node-0"), ("Pod", "train-node-1")]
    store = objs[1]
    labels = store["metadata"]["labels"]
    assert labels == {"app.kubernetes.io/managed-by": "pinery", "pinery.dev/job-name": "train", "pinery.dev/role": "rendezvous"}
    assert "pinery.dev/node-rank" not in labels and store["metadata"]["ownerReferences"][0]["uid"] == "uid-7"
    pod = store["spec"]
    # Addressed like a node, under the job's Service (which selects it by the job-name label).
    assert (pod["hostname"], pod["subdomain"]) == ("train-rendezvous", "train")
    assert pod["restartPolicy"] == "Always" and pod["automountServiceAccountToken"] is False
    (c,) = pod["containers"]
    assert c["image"] == "me/train:1" and c["command"][:2] == ["python3", "-c"] and c["command"][-1] == "23456"
    assert c["ports"] == [{"name": "rendezvous", "containerPort": 23456, "protocol": "TCP"}]
    # Where the training image can be pulled and the nodes may run, but outside the gang.
    assert pod["nodeSelector"] == {"pool": "gpu"} and pod["tolerations"] == template["tolerations"]
    assert pod["imagePullSecrets"] == [{"name": "regcred"}] and pod["priorityClassName"] == "high"
    assert "schedulerName" not in pod and "affinity" not in pod
    assert pod["securityContext"]["runAsNonRoot"] is True
    # A static job has none.
    assert [o["metadata"]["name"] for o in children(spec()) if o["kind"] == "Pod"] == ["train-node-0", "train-node-1"]


def test_the_store_runs_the_trainer_image_for_the_built_in_trainer():
    objs = children(spec(numNodes=2, elastic={"minNodes": 1}))
    store = next(o for o in objs if o["metadata"]["name"] == "train-rendezvous")
    assert store["spec"]["containers"][0]["image"] == SETTINGS.trainer_image


def test_headless_service_publishes_not_ready_addresses():
    svc = build_service(JOB, spec(masterPort=23456))
    assert_valid(svc)
    assert svc["spec"]["clusterIP"] == "None" and svc["spec"]["publishNotReadyAddresses"] is True
    assert svc["spec"]["selector"] == {"pinery.dev/job-name": "train"}
    assert svc["spec"]["ports"] == [{"name": "rendezvous", "port": 23456, "targetPort": 23456, "protocol": "TCP"}]
    assert svc["metadata"]["ownerReferences"] == [
        {"apiVersion": "pinery.dev/v1alpha1", "kind": "FSDPJob", "name": "train", "uid": "uid-7", "controller": True, "blockOwnerDeletion": True}
    ]


def test_pod_identity_dns_and_restart_policy():
    pod = build_pod(JOB, spec(), 1, 3, SETTINGS)
    assert_valid(pod)
    assert pod["metadata"]["labels"] == {
        "app.kubernetes.io/managed-by": "pinery",
        "pinery.dev/job-name": "train",
        "pinery.dev/node-rank": "1",
        "pinery.dev/attempt": "3",
    }
    assert pod["spec"]["hostname"] == "train-node-1" and pod["spec"]["subdomain"] == "train"
    assert pod["spec"]["restartPolicy"] == "Never" and pod["spec"]["enableServiceLinks"] is False
    assert pod["metadata"]["ownerReferences"][0]["controller"] is True
    assert pod_fqdn("train", 1, "ml", "cluster.local") == "train-node-1.train.ml.svc.cluster.local"
    assert env_of(pod)["PINERY_ATTEMPT"] == "3"


def test_only_ranks_after_zero_wait_for_rank0_with_the_operator_image():
    s = spec(numNodes=3, startupTimeoutSeconds=240, masterPort=1234)
    pods = [build_pod(JOB, s, r, 0, SETTINGS) for r in range(3)]
    assert "initContainers" not in pods[0]["spec"]
    for pod in pods[1:]:
        (init,) = pod["spec"]["initContainers"]
        assert init["image"] == "op:test"
        assert init["command"] == ["pinery", "wait-for", f"{ADDR}:1234", "--timeout", "240"]
        assert init["securityContext"]["allowPrivilegeEscalation"] is False


def test_cluster_domain_comes_from_settings():
    settings = dataclasses.replace(SETTINGS, cluster_domain="corp.example")
    assert master_addr("train", "ml", "corp.example") == "train-node-0.train.ml.svc.corp.example"
    assert env_of(build_pod(JOB, spec(), 1, 0, settings))["MASTER_ADDR"] == "train-node-0.train.ml.svc.corp.example"


def test_builtin_trainer_default_command_and_config_map():
    s = spec(trainer={"steps": 17, "model": {"preset": "tiny", "seqLen": 32}}, args=["--set", "seed=3"])
    objs = children(s)
    cm = next(o for o in objs if o["kind"] == "ConfigMap")
    assert cm["metadata"]["name"] == "train-trainer"
    config = yaml.safe_load(cm["data"]["trainer.yaml"])
    assert config["steps"] == 17 and config["model"]["seqLen"] == 32 and "logEvery" in config
    assert TrainerConfig.model_validate(config) == s.trainer
    pod = next(o for o in objs if o["kind"] == "Pod")
    container = pod["spec"]["containers"][0]
    assert container["command"] == list(DEFAULT_COMMAND) == ["python", "-m", "pinery_trainer.launch", "--config", "/etc/pinery/trainer.yaml"]
    assert container["args"] == ["--set", "seed=3"] and container["image"] == "trainer:test"
    assert {"name": "pinery-trainer-config", "mountPath": "/etc/pinery", "readOnly": True} in container["volumeMounts"]
    assert container["terminationMessagePolicy"] == "FallbackToLogsOnError"


def test_default_trainer_config_when_spec_has_none():
    cm = build_config_map(JOB, spec())
    assert TrainerConfig.model_validate(yaml.safe_load(cm["data"]["trainer.yaml"])) == TrainerConfig()


def test_custom_command_has_no_config_map_and_keeps_its_image():
    s = spec(command=["torchrun", "train.py"], args=["--lr", "1"], image="me/train:1", imagePullPolicy="Always",
             env=[{"name": "NCCL_DEBUG", "value": "INFO"}, {"name": "TOKEN", "valueFrom": {"secretKeyRef": {"name": "s", "key": "k"}}}])
    objs = children(s)
    assert [o["kind"] for o in objs] == ["Service", "Pod", "Pod"]
    container = objs[1]["spec"]["containers"][0]
    assert container["command"] == ["torchrun", "train.py"] and container["args"] == ["--lr", "1"]
    assert container["image"] == "me/train:1" and container["imagePullPolicy"] == "Always"
    names = [e["name"] for e in container["env"]]
    assert names[-2:] == ["NCCL_DEBUG", "TOKEN"] and names.index("MASTER_ADDR") < names.index("NCCL_DEBUG")
    assert container["env"][-1]["valueFrom"] == {"secretKeyRef": {"name": "s", "key": "k"}}
    assert "volumes" not in objs[1]["spec"]


def test_shm_and_checkpoint_volumes():
    s = spec(shmSize="8Gi", checkpoint={"volumeClaimName": "ckpt", "path": "/ckpt", "intervalSteps": 50}, command=["x"])
    pod = [o for o in children(s) if o["kind"] == "Pod"][0]
    assert pod["spec"]["volumes"] == [
        {"name": "pinery-shm", "emptyDir": {"medium": "Memory", "sizeLimit": "8Gi"}},
        {"name": "pinery-checkpoint", "persistentVolumeClaim": {"claimName": "ckpt"}},
    ]
    assert pod["spec"]["containers"][0]["volumeMounts"] == [
        {"name": "pinery-shm", "mountPath": "/dev/shm"},
        {"name": "pinery-checkpoint", "mountPath": "/ckpt"},
    ]
    env = env_of(pod)
    assert env["PINERY_CHECKPOINT_DIR"] == "/ckpt" and env["PINERY_CHECKPOINT_INTERVAL"] == "50"
    assert "PINERY_CHECKPOINT_DIR" not in env_of(build_pod(JOB, spec(), 0, 0, SETTINGS))


TEMPLATE = {
    "labels": {"team": "nlp", "pinery.dev/job-name": "hijack"},
    "annotations": {"prometheus.io/scrape": "true"},
    "nodeSelector": {"gpu": "h100"},
    "tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}],
    "affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
        "nodeSelectorTerms": [{"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a"]}]}]}}},
    "serviceAccountName": "trainer",
    "priorityClassName": "high",
    "schedulerName": "volcano",
    "runtimeClassName": "nvidia",
    "volumes": [{"name": "data", "persistentVolumeClaim": {"claimName": "datasets", "readOnly": True}}],
    "volumeMounts": [{"name": "data", "mountPath": "/data", "readOnly": True}],
    "imagePullSecrets": [{"name": "registry"}],
}


def test_pod_template_is_applied_under_pinerys_own_labels():
    s = spec(podTemplate=TEMPLATE, shmSize="1Gi")
    pod = [o for o in children(s) if o["kind"] == "Pod"][1]
    meta, ps = pod["metadata"], pod["spec"]
    assert meta["labels"]["team"] == "nlp" and meta["labels"]["pinery.dev/job-name"] == "train"
    assert meta["annotations"] == {"prometheus.io/scrape": "true"}
    assert ps["nodeSelector"] == {"gpu": "h100"} and ps["tolerations"] == TEMPLATE["tolerations"]
    assert ps["affinity"] == TEMPLATE["affinity"] and ps["serviceAccountName"] == "trainer"
    assert "automountServiceAccountToken" not in ps
    assert (ps["priorityClassName"], ps["schedulerName"], ps["runtimeClassName"]) == ("high", "volcano", "nvidia")
    assert ps["imagePullSecrets"] == [{"name": "registry"}]
    assert [v["name"] for v in ps["volumes"]] == ["pinery-shm", "pinery-trainer-config", "data"]
    assert ps["containers"][0]["volumeMounts"][-1] == {"name": "data", "mountPath": "/data", "readOnly": True}
    # the builder copies: mutating the pod leaves the spec alone
    ps["tolerations"][0]["key"] = "changed"
    assert s.pod_template.tolerations[0]["key"] == "nvidia.com/gpu"


def test_a_placement_adds_to_the_template_and_never_replaces_pinerys_labels():
    gang = Placement(labels={"scheduling.x-k8s.io/pod-group": "train-0", "pinery.dev/job-name": "other"},
                     scheduler_name="scheduler-plugins-scheduler")
    flavor = Placement(node_selector={"cloud.example/accelerator": "h100"}, annotations={"note": "admitted"},
                       tolerations=({"key": "spot", "operator": "Exists", "effect": "NoSchedule"}, TEMPLATE["tolerations"][0]))
    pod = build_pod(JOB, spec(podTemplate=TEMPLATE), 1, 3, SETTINGS, gang + flavor)
    assert_valid(pod)
    meta, ps = pod["metadata"], pod["spec"]
    assert meta["labels"]["scheduling.x-k8s.io/pod-group"] == "train-0"
    assert meta["labels"]["pinery.dev/job-name"] == "train" and meta["labels"]["pinery.dev/attempt"] == "3"
    assert meta["annotations"] == {"prometheus.io/scrape": "true", "note": "admitted"}
    assert ps["nodeSelector"] == {"gpu": "h100", "cloud.example/accelerator": "h100"}
    # the template's toleration once, then the admission's own
    assert ps["tolerations"] == [*TEMPLATE["tolerations"], {"key": "spot", "operator": "Exists", "effect": "NoSchedule"}]
    assert ps["schedulerName"] == "scheduler-plugins-scheduler"  # the placement's, over the template's volcano


def test_placements_combine_later_wins_and_tolerations_are_not_repeated():
    a = Placement(labels={"x": "1"}, tolerations=({"key": "a"},), scheduler_name="volcano")
    b = Placement(labels={"x": "2", "y": "3"}, tolerations=({"key": "a"}, {"key": "b"}))
    both = a + b
    assert both.labels == {"x": "2", "y": "3"}
    assert both.tolerations == ({"key": "a"}, {"key": "b"})
    assert both.scheduler_name == "volcano"
    assert build_pod(JOB, spec(), 0, 0, SETTINGS)["spec"].get("nodeSelector") is None  # nothing added, nothing empty


def test_security_defaults_and_user_overrides():
    pod = build_pod(JOB, spec(), 0, 0, SETTINGS)
    assert pod["spec"]["securityContext"]["runAsNonRoot"] is True
    assert pod["spec"]["securityContext"]["runAsUser"] == 1000
    assert pod["spec"]["securityContext"]["seccompProfile"] == {"type": "RuntimeDefault"}
    assert pod["spec"]["containers"][0]["securityContext"] == {"allowPrivilegeEscalation": False, "capabilities": {"drop": ["ALL"]}}
    assert pod["spec"]["automountServiceAccountToken"] is False
    own = spec(podTemplate={"securityContext": {"runAsUser": 0}, "containerSecurityContext": {"capabilities": {"add": ["IPC_LOCK"]}}})
    pod = build_pod(JOB, own, 0, 0, SETTINGS)
    assert_valid(pod)
    assert pod["spec"]["securityContext"] == {"runAsUser": 0}
    assert pod["spec"]["containers"][0]["securityContext"] == {"capabilities": {"add": ["IPC_LOCK"]}}


def test_pods_get_time_to_checkpoint_after_sigterm():
    assert build_pod(JOB, spec(), 0, 0, SETTINGS)["spec"]["terminationGracePeriodSeconds"] == 120
    own = build_pod(JOB, spec(podTemplate={"terminationGracePeriodSeconds": 0}), 1, 0, SETTINGS)
    assert_valid(own)
    assert own["spec"]["terminationGracePeriodSeconds"] == 0


def test_resources_pass_through():
    pod = build_pod(JOB, spec(resources={"requests": {"cpu": "4", "memory": "16Gi"}, "limits": GPU["limits"]}), 0, 0, SETTINGS)
    assert pod["spec"]["containers"][0]["resources"] == {"limits": {"nvidia.com/gpu": 4}, "requests": {"cpu": "4", "memory": "16Gi"}}


def test_schema_check_rejects_a_broken_pod():
    pod = build_pod(JOB, spec(), 0, 0, SETTINGS)
    pod["spec"]["restartPolicy"] = 7
    with pytest.raises(AssertionError, match="restartPolicy"):
        assert_valid(pod)
    pod = build_pod(JOB, spec(), 0, 0, SETTINGS)
    pod["spec"]["containers"][0]["bogus"] = True
    with pytest.raises(AssertionError):
        assert_valid(pod)


@pytest.mark.parametrize(
    "quantity, value", [("2", 2), (8, 8), ("500m", 0.5), ("1Ki", 1024), ("1e3", 1000), ("1.5G", 1.5e9), (".5", 0.5)]
)
def test_quantities(quantity, value):
    assert float(quantity_value(quantity)) == value


def test_gpu_count_takes_the_larger_of_requests_and_limits_and_sums_vendors():
    s = spec(resources={"limits": {"nvidia.com/gpu": "2"}, "requests": {"amd.com/gpu": 1, "cpu": "3"}})
    assert gpu_count(s) == 3 and nproc_per_node(s) == 3
    assert nproc_per_node(spec(nprocPerNode=3, resources=GPU)) == 3


@pytest.mark.parametrize("trainer", [
    None,
    {"steps": 17, "model": {"preset": "tiny", "seqLen": 32}},
    {"data": {"source": "/mnt/data/" + "very-long-directory-name/" * 8 + "corpus.jsonl", "format": "jsonl",
              "textField": "body: with a colon, # and a hash"}},
    {"data": {"source": "données/été — ünïcode", "tokenizer": "'quoted' \"double\""}, "checkpoint": {"dir": "yes"}},
    {"data": {"source": "123"}, "checkpoint": {"dir": "null"}, "report": {"tensorboardDir": " leading space"}},
])
def test_the_trainer_yaml_is_the_text_the_pure_python_emitter_writes(trainer):
    """libyaml's emitter (children.YAML_DUMPER, where PyYAML has it) writes what the pure-Python
    one did, so the ConfigMaps of existing jobs are not seen as changed."""
    cm = build_config_map(JOB, spec(**({"trainer": trainer} if trainer else {})))
    data = (spec(**({"trainer": trainer} if trainer else {})).trainer or TrainerConfig()).model_dump(by_alias=True, exclude_none=True, mode="json")
    assert cm["data"]["trainer.yaml"] == yaml.dump(data, Dumper=yaml.SafeDumper, sort_keys=False)
    assert yaml.safe_load(cm["data"]["trainer.yaml"]) == data
