"""The API models: defaults, cross-field rules and helpers, table-driven."""

import pytest
from pydantic import ValidationError

from pinery.api import FSDPJobSpec, VectorIndexSpec
from pinery.api.fsdpjob import is_reserved_env
from pinery.api.vectorindex import metadata_problems

SERVERLESS = {"cloud": "aws", "region": "us-east-1"}


def vi(**spec):
    return VectorIndexSpec.model_validate(spec)


def test_vectorindex_defaults():
    spec = vi(dimension=8, serverless=SERVERLESS)
    assert spec.vector_type == "dense"
    assert spec.effective_metric == "cosine"
    assert spec.deletion_protection is False
    assert spec.deletion_policy == "Delete"
    assert spec.adopt_existing is False
    assert spec.deployment_type == "serverless"
    assert spec.index_name_for("obj") == "obj"
    assert vi(vectorType="sparse", serverless=SERVERLESS).effective_metric == "dotproduct"


def test_vectorindex_round_trips_in_camel_case():
    data = {
        "indexName": "my-index",
        "dimension": 8,
        "pod": {"environment": "us-east1-gcp", "podType": "p1.x2", "replicas": 2, "metadataConfig": {"indexed": ["a"]}},
        "tags": {"team": "search"},
        "apiKeySecretRef": {"name": "pc"},
        "connectionConfigMap": "conn",
    }
    api = vi(**data).to_api()
    assert api["pod"]["podType"] == "p1.x2"
    assert api["pod"]["metadataConfig"] == {"indexed": ["a"]}
    assert api["apiKeySecretRef"] == {"name": "pc", "key": "api-key"}
    assert "pods" not in api["pod"]
    assert vi(**data).pod.total_pods == 2


@pytest.mark.parametrize(
    "spec, fragment",
    [
        ({"dimension": 8}, "exactly one of serverless, pod and byoc"),
        ({"dimension": 8, "serverless": SERVERLESS, "byoc": {"environment": "e"}}, "found serverless, byoc"),
        ({"serverless": SERVERLESS}, "spec.dimension: required for dense"),
        ({"vectorType": "sparse", "dimension": 3, "serverless": SERVERLESS}, "must not be set for sparse"),
        ({"vectorType": "sparse", "metric": "cosine", "serverless": SERVERLESS}, "sparse indexes require dotproduct"),
        ({"vectorType": "sparse", "pod": {"environment": "e"}}, "cannot be pod-based"),
        ({"dimension": 8, "serverless": SERVERLESS, "tags": {"pinery-owner": "x"}}, "spec.tags[pinery-owner]"),
        ({"dimension": 8, "pod": {"environment": "e", "replicas": 2, "shards": 2, "pods": 3}}, "must equal shards x replicas"),
        ({"dimension": 0, "serverless": SERVERLESS}, "greater than or equal to 1"),
        ({"dimension": 20001, "serverless": SERVERLESS}, "less than or equal to 20000"),
        ({"dimension": 8, "serverless": {"cloud": "ibm", "region": "x"}}, "serverless.cloud"),
        ({"dimension": 8, "pod": {"environment": "e", "podType": "p3.x1"}}, "podType"),
        ({"dimension": 8, "serverless": SERVERLESS, "indexName": "Bad_Name"}, "indexName"),
        ({"dimension": 8, "serverless": SERVERLESS, "indexName": "a" * 46}, "indexName"),
        ({"dimension": 8, "serverless": SERVERLESS, "tags": {"bad key": "v"}}, "tags"),
        ({"dimension": 8, "serverless": SERVERLESS, "tags": {"k": "bad/value"}}, "tags"),
        ({"dimension": 8, "serverless": SERVERLESS, "unknownField": 1}, "unknownField"),
    ],
)
def test_vectorindex_rejections(spec, fragment):
    with pytest.raises(ValidationError) as info:
        VectorIndexSpec.model_validate(spec)
    assert fragment in str(info.value)


@pytest.mark.parametrize(
    "name, spec, problem",
    [
        ("good-name", {}, None),
        ("UPPER", {}, "metadata.name"),
        ("a" * 46, {}, "metadata.name"),
        ("dotted.name", {}, "metadata.name"),
        ("dotted.name", {"indexName": "fine"}, None),
    ],
)
def test_metadata_name_is_the_default_index_name(name, spec, problem):
    found = metadata_problems(name, spec)
    assert (found[0].path if found else None) == problem


def job(**spec):
    return FSDPJobSpec.model_validate({"numNodes": 2, **spec})


def test_fsdpjob_defaults():
    spec = job()
    assert spec.nproc_per_node == "auto"
    assert spec.master_port == 29500
    assert spec.max_restarts == 3
    assert spec.suspend is False
    assert spec.startup_timeout_seconds == 600
    assert spec.command is None and spec.trainer is None


@pytest.mark.parametrize("nproc", [1, 4, 8, "auto"])
def test_nproc_per_node_accepts_positive_ints_and_auto(nproc):
    assert job(nprocPerNode=nproc).nproc_per_node == nproc


@pytest.mark.parametrize("nproc", [0, -1, "four", "AUTO", 1.5])
def test_nproc_per_node_rejects_everything_else(nproc):
    with pytest.raises(ValidationError):
        job(nprocPerNode=nproc)


@pytest.mark.parametrize(
    "spec, fragment",
    [
        ({"numNodes": 0}, "numNodes"),
        ({"numNodes": 1001}, "numNodes"),
        ({"env": [{"name": "MASTER_ADDR", "value": "x"}]}, "spec.env[0].name: MASTER_ADDR is set by pinery"),
        ({"env": [{"name": "A", "value": "1"}, {"name": "PET_NNODES", "value": "3"}]}, "spec.env[1].name"),
        ({"env": [{"name": "PINERY_CHECKPOINT_DIR", "value": "/x"}]}, "PINERY_CHECKPOINT_DIR"),
        ({"command": ["torchrun"], "trainer": {}}, "spec.trainer: is used only without spec.command"),
        ({"elastic": {"minNodes": 3}}, "spec.elastic.minNodes"),
        ({"numNodes": 5, "elastic": {"minNodes": 1, "maxNodes": 4}}, "spec.numNodes: must lie between"),
        ({"podTemplate": {"volumeMounts": [{"name": "data", "mountPath": "/data"}]}}, "no volume named 'data'"),
        ({"podTemplate": {"volumeMounts": [{"name": "data", "mountPath": "relative"}], "volumes": [{"name": "data", "emptyDir": {}}]}}, "mountPath"),
        ({"masterPort": 70000}, "masterPort"),
        ({"shmSize": "lots"}, "not a Kubernetes quantity"),
        ({"resources": {"limits": {"cpu": "2x"}}}, "not a Kubernetes quantity"),
        # apimachinery's parser takes only an integer exponent (suffix.go `interpret`)
        ({"resources": {"limits": {"memory": "1e2.5"}}}, "not a Kubernetes quantity"),
        ({"nonRetryableExitCodes": [0]}, "nonRetryableExitCodes"),
        ({"checkpoint": {"volumeClaimName": "ckpt", "path": "relative"}}, "checkpoint.path"),
        ({"trainer": {"steps": 5, "optim": {"warmupSteps": 10}}}, "optim.warmupSteps: must not exceed steps (5)"),
        ({"trainer": {"model": {"preset": "huge"}}}, "preset"),
        ({"suspend": "yes please"}, "suspend"),
        ({"gang": {"scheduler": "kube-batch"}}, "gang.scheduler"),
        ({"gang": {"scheduler": "volcano", "scheduleTimeoutSeconds": 30}}, "spec.gang.scheduleTimeoutSeconds: is a coscheduling setting"),
        ({"gang": {"scheduler": "coscheduling", "queue": "q"}}, "spec.gang.queue: is a volcano setting"),
        ({"gang": {"scheduler": "coscheduling", "scheduleTimeoutSeconds": 0}}, "scheduleTimeoutSeconds"),
        ({"maxDisruptions": -1}, "maxDisruptions"),
        ({"restartBackoffSeconds": 3601}, "restartBackoffSeconds"),
        ({"progressDeadlineSeconds": 0}, "progressDeadlineSeconds"),
        ({"progressDeadlineSeconds": 7 * 24 * 3600 + 1}, "progressDeadlineSeconds"),
        ({"firstProgressDeadlineSeconds": 0}, "firstProgressDeadlineSeconds"),
        ({"firstProgressDeadlineSeconds": 7 * 24 * 3600 + 1}, "firstProgressDeadlineSeconds"),
    ],
)
def test_fsdpjob_rejections(spec, fragment):
    with pytest.raises(ValidationError) as info:
        job(**spec)
    assert fragment in str(info.value)


def test_fsdpjob_accepts_a_full_spec():
    spec = job(
        nprocPerNode=4,
        image="example.com/train:1",
        command=["torchrun", "train.py"],
        args=["--lr", "1e-4"],
        env=[{"name": "NCCL_DEBUG", "value": "INFO"}, {"name": "TOKEN", "valueFrom": {"secretKeyRef": {"name": "s", "key": "k"}}}],
        resources={"limits": {"nvidia.com/gpu": 4, "memory": "64Gi"}, "requests": {"cpu": "8"}},
        shmSize="16Gi",
        elastic={"minNodes": 1, "maxNodes": 4},
        checkpoint={"volumeClaimName": "ckpt"},
        podTemplate={
            "labels": {"team": "ml"},
            "nodeSelector": {"gpu": "h100"},
            "tolerations": [{"key": "gpu", "operator": "Exists"}],
            "affinity": {"nodeAffinity": {}},
            "volumes": [{"name": "data", "persistentVolumeClaim": {"claimName": "data"}}],
            "volumeMounts": [{"name": "data", "mountPath": "/data"}],
            "imagePullSecrets": [{"name": "regcred"}],
            "schedulerName": "volcano",
        },
    )
    assert spec.elastic.max_nodes == 4
    assert spec.checkpoint.path == "/checkpoints" and spec.checkpoint.interval_steps == 100
    # Volume sources other than the name pass through untouched.
    assert spec.pod_template.to_api()["volumes"][0]["persistentVolumeClaim"] == {"claimName": "data"}


@pytest.mark.parametrize(
    "name, reserved",
    [("MASTER_ADDR", True), ("RANK", True), ("PET_RDZV_ID", True), ("PINERY_X", True), ("NCCL_DEBUG", False), ("MASTER", False)],
)
def test_reserved_env(name, reserved):
    assert is_reserved_env(name) is reserved
