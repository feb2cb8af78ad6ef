"""DeleteOptions in protobuf, the body of Helm's DELETE of its release Secrets.

Field numbers from apimachinery pkg/apis/meta/v1/generated.proto (DeleteOptions, Preconditions);
the API server reads DeleteOptions in any group version (apiserver handlers/delete.go).
"""

from __future__ import annotations

import pytest

from pinery.local.apiserver.operations import DeleteOptions
from pinery.local.apiserver.protobuf import decode
from tests.unit.test_protobuf import body, field


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        (b"", {}),
        (field(1, 0), {"gracePeriodSeconds": 0}),  # a pointer: zero is sent and kept
        (field(1, 30), {"gracePeriodSeconds": 30}),
        (field(2, field(1, "u-1") + field(2, "42")), {"preconditions": {"uid": "u-1", "resourceVersion": "42"}}),
        (field(3, 1), {"orphanDependents": True}),
        (field(4, "Foreground"), {"propagationPolicy": "Foreground"}),
        (field(5, "All"), {"dryRun": ["All"]}),
        (field(6, 0), {"ignoreStoreReadErrorWithClusterBreakingPotential": False}),
    ],
)
@pytest.mark.parametrize("api_version", ["v1", "meta.k8s.io/v1", "apps/v1"])
def test_delete_options_fields(raw, expected, api_version):
    assert decode(body("DeleteOptions", raw, api_version)) == {"apiVersion": api_version, "kind": "DeleteOptions", **expected}


def test_delete_options_feed_the_delete():
    decoded = decode(body("DeleteOptions", field(1, 0) + field(4, "Background") + field(5, "All")))
    options = DeleteOptions.from_body(decoded, {})
    assert (options.grace_seconds, options.propagation, options.dry_run) == (0, "Background", True)
