"""Which spec the children are built from, and the Synced condition that says so. Pure.

The immutable fields an FSDPJob was created with are recorded on its Service; a later change
to one of them cannot reach running pods, so the accepted values stay in force (and Synced
turns False naming the fields) while the mutable fields follow the spec as it is now.
"""

from __future__ import annotations

import json
from typing import Any, Optional

from pinery.api.conditions import ConditionStatus
from pinery.api.fsdpjob import FSDPJobSpec
from pinery.api.immutability import changed_immutable_fields, mutable_fields
from pinery.fsdpjob.naming import ANNOTATION_SPEC


def effective_spec(current: FSDPJobSpec, service: Optional[dict[str, Any]]) -> tuple[FSDPJobSpec, list[str]]:
    """(the spec to build from, the immutable fields changed since the job was accepted)."""
    record = ((service or {}).get("metadata") or {}).get("annotations", {}).get(ANNOTATION_SPEC)
    if not record:
        return current, []
    try:
        accepted = json.loads(record)
        now_api = current.to_api()
        mutable = set(mutable_fields(FSDPJobSpec))
        if accepted == {k: v for k, v in now_api.items() if k not in mutable}:
            return current, []  # as recorded (children.accepted_spec): nothing to compare field by field
        changed = changed_immutable_fields(FSDPJobSpec, accepted, now_api)
        if not changed:
            return current, []
        merged = {k: v for k, v in accepted.items() if k not in mutable}
        merged.update({k: v for k, v in now_api.items() if k in mutable})
        return FSDPJobSpec.model_validate(merged), changed
    except (ValueError, TypeError):
        return current, []  # an unreadable record: the current spec is all there is


def synced_condition(changed: list[str]) -> tuple[ConditionStatus, str, str]:
    """(status, reason, message) of the Synced condition."""
    if changed:
        fields = ", ".join(f"spec.{f}" for f in changed)
        return (
            "False", "ImmutableFieldChanged",
            f"{fields} changed after the job was created and cannot change in place: the pods keep "
            "running the spec the job was created with; delete and recreate the job to change it",
        )
    return "True", "SpecApplied", "the pods run the job's spec"
