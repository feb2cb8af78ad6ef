"""The backup API: VectorIndexBackup (one Pinecone backup of an index) and
VectorIndexBackupSchedule (backups made on a cron schedule, kept by a retention rule).

The shapes follow CloudNativePG's `Backup`/`ScheduledBackup` and Kubernetes' CronJob
(`schedule`, `timeZone`, `startingDeadlineSeconds`, `suspend`, `lastScheduleTime`); what pinery
does with them is docs/backups.md.
"""

from __future__ import annotations

from typing import Any, Literal, Optional

from pydantic import Field, ValidationInfo, model_validator

from pinery import cron
from pinery.api.base import ApiModel, ObjectName, SecretKeyRef, immutable, report_problems
from pinery.api.conditions import Condition
from pinery.api.resource import CelRule, PrinterColumn, ResourceInfo
from pinery.api.vectorindex import IndexName
from pinery.schema.errors import FieldError

DeletionPolicy = Literal["Delete", "Retain"]
BackupPhase = Literal["Pending", "Creating", "Ready", "Failed", "Terminating"]
# pinery's bound: Pinecone's CreateBackupRequest.description has none (2025-10 spec).
MAX_DESCRIPTION = 256
# Backups are named after their schedule and the scheduled minute (`<schedule>-<YYYYMMDDhhmm>`,
# as CronJob names Jobs `<cronjob>-<minutes since the epoch>`): 13 characters of suffix.
SCHEDULE_NAME_MAX = 253 - 13
# Go's time.ParseDuration units, plus days (as CloudNativePG's retentionPolicy writes `30d`).
MAX_AGE_PATTERN = r"^([0-9]+(d|h|m))+$"

def _conditions_schema() -> dict[str, Any]:
    return {"x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["type"]}


class VectorIndexBackupSpec(ApiModel):
    """A backup of one Pinecone index, taken once. Nothing but deletionPolicy changes after
    creation: a backup is a fact, and another backup is another object."""

    vector_index_name: Optional[ObjectName] = Field(
        None,
        json_schema_extra=immutable(),
        description="The VectorIndex (same namespace) whose index to back up; its API key is used.",
    )
    index_name: Optional[IndexName] = Field(
        None,
        json_schema_extra=immutable(),
        description="Or: the name of a Pinecone index the API key can see (one no VectorIndex manages).",
    )
    api_key_secret_ref: Optional[SecretKeyRef] = Field(
        None,
        json_schema_extra=immutable(),
        description="With indexName: the Secret key holding the Pinecone API key. Defaults to the operator's Secret.",
    )
    description: Optional[str] = Field(
        None,
        max_length=MAX_DESCRIPTION,
        json_schema_extra=immutable(),
        description="Description of the backup in Pinecone.",
    )
    deletion_policy: DeletionPolicy = Field(
        "Delete",
        description=(
            "What happens to the Pinecone backup when this object is deleted: Delete (default) "
            "deletes it, Retain keeps it. It may change at any time, so that a backup can be kept "
            "when its object goes."
        ),
    )

    def problems(self) -> list[FieldError]:
        """Cross-field rules (each also a CEL rule in the CRD)."""
        out: list[FieldError] = []
        if (self.vector_index_name is None) == (self.index_name is None):
            out.append(FieldError("spec", "exactly one of vectorIndexName and indexName must be set"))
        if self.api_key_secret_ref is not None and self.index_name is None:
            out.append(FieldError("spec.apiKeySecretRef", "only with indexName: a VectorIndex's backup uses the VectorIndex's key"))
        return out

    @model_validator(mode="after")
    def _check_rules(self, info: ValidationInfo) -> "VectorIndexBackupSpec":
        report_problems(self.problems(), info)
        return self


class VectorIndexBackupStatus(ApiModel):
    """The backup as Pinecone reports it, written by the operator."""

    conditions: list[Condition] = Field(
        default_factory=list,
        max_length=16,
        json_schema_extra=_conditions_schema(),
        description="Ready: the backup exists in Pinecone and can be restored.",
    )
    phase: Optional[BackupPhase] = Field(
        None, description="Pending, Creating, Ready, Failed (see the Ready condition) or Terminating."
    )
    backup_id: Optional[str] = Field(None, description="Pinecone's id of the backup (what restoreFrom.backupId takes).")
    backup_name: Optional[str] = Field(None, description="Name of the backup in Pinecone: the object's name and uid.")
    index_name: Optional[str] = Field(None, description="The Pinecone index backed up.")
    state: Optional[str] = Field(None, description="Pinecone's state of the backup (Initializing, Ready, Failed).")
    record_count: Optional[int] = Field(None, description="Records in the backup.")
    namespace_count: Optional[int] = Field(None, description="Namespaces in the backup.")
    size_bytes: Optional[int] = Field(None, description="Size of the backup in bytes.")
    dimension: Optional[int] = Field(None, description="Dimension of the backed-up index's dense vectors.")
    metric: Optional[str] = Field(None, description="Metric of the backed-up index.")
    created_at: Optional[str] = Field(None, description="When Pinecone made the backup (RFC 3339).")
    api_key_secret_ref: Optional[SecretKeyRef] = Field(
        None, description="The Secret key (this namespace) the backup was made with, read again to delete it."
    )
    observed_generation: Optional[int] = Field(None, ge=0, description="The metadata.generation the operator last acted on.")
    create_sent_at: Optional[str] = Field(
        None,
        json_schema_extra={"format": "date-time"},
        description=(
            "Set (RFC 3339) when the operator asks Pinecone for the backup, removed once the "
            "backup is known. While it is set, a restarted operator looks for the backup it may "
            "have made before it asks again, so that one object never makes two backups."
        ),
    )


VECTOR_INDEX_BACKUP = ResourceInfo(
    kind="VectorIndexBackup",
    plural="vectorindexbackups",
    short_names=("vib",),
    description="A backup of a Pinecone index, made once by pinery and deleted with the object unless retained.",
    spec_model=VectorIndexBackupSpec,
    status_model=VectorIndexBackupStatus,
    spec_rules=(
        CelRule(
            rule="has(self.vectorIndexName) != has(self.indexName)",
            message="exactly one of vectorIndexName and indexName must be set",
        ),
        CelRule(
            rule="!has(self.apiKeySecretRef) || has(self.indexName)",
            message="apiKeySecretRef: only with indexName: a VectorIndex's backup uses the VectorIndex's key",
            field_path=".apiKeySecretRef",
        ),
    ),
    printer_columns=(
        PrinterColumn("Index", ".status.indexName", "string", "The Pinecone index backed up."),
        PrinterColumn("Phase", ".status.phase", "string", "Summary of the conditions."),
        PrinterColumn("Records", ".status.recordCount", "integer", "Records in the backup."),
        PrinterColumn("Age", ".metadata.creationTimestamp", "date", "Time since the object was created."),
        PrinterColumn("Backup ID", ".status.backupId", "string", "Pinecone's id of the backup.", priority=1),
        PrinterColumn("Size", ".status.sizeBytes", "integer", "Size of the backup in bytes.", priority=1),
    ),
)


class Retention(ApiModel):
    """Which of the schedule's backups are kept: a backup is kept while either rule keeps it,
    and the newest ready backup always is."""

    keep_last: Optional[int] = Field(None, ge=1, le=1000, description="Keep the newest N ready backups.")
    max_age: Optional[str] = Field(
        None,
        max_length=32,
        pattern=MAX_AGE_PATTERN,
        description="Keep ready backups younger than this: days, hours and minutes, for example 30d, 36h or 1d12h.",
    )


class BackupTemplate(ApiModel):
    """What each backup the schedule makes is made with."""

    description: Optional[str] = Field(None, max_length=MAX_DESCRIPTION, description="Description of each backup in Pinecone.")
    deletion_policy: DeletionPolicy = Field(
        "Delete",
        description="deletionPolicy of each backup: Delete (retention deletes the Pinecone backup too) or Retain.",
    )


class VectorIndexBackupScheduleSpec(ApiModel):
    """Backups of a VectorIndex's index on a cron schedule, with retention."""

    vector_index_name: ObjectName = Field(description="The VectorIndex (same namespace) whose index to back up.")
    schedule: str = Field(
        min_length=1,
        max_length=128,
        description=(
            "When to back up: a standard 5-field cron expression (minute hour day-of-month month "
            "day-of-week) or a descriptor such as @daily, as Kubernetes CronJob reads it."
        ),
    )
    time_zone: Optional[str] = Field(
        None,
        min_length=1,
        max_length=64,
        description="IANA time zone of the schedule, for example Europe/Berlin. Defaults to UTC.",
    )
    starting_deadline_seconds: Optional[int] = Field(
        None,
        ge=0,
        description=(
            "How late a run may start, in seconds. Runs missed while the operator was down get at "
            "most one catch-up run, the latest missed one, if it is within this deadline (none: "
            "always), as CronJob's startingDeadlineSeconds."
        ),
    )
    suspend: bool = Field(False, description="Make no new backups while true; existing ones are kept and retention still applies.")
    retention: Optional[Retention] = Field(None, description="Which backups to keep. Without it every backup is kept.")
    backup_template: Optional[BackupTemplate] = Field(None, description="What each backup is made with.")

    def problems(self) -> list[FieldError]:
        """Cross-field rules, and what CEL cannot check: the schedule and the time zone as
        Kubernetes CronJob reads them (pinery.cron), a positive maxAge."""
        out: list[FieldError] = []
        if self.retention is not None and self.retention.keep_last is None and self.retention.max_age is None:
            out.append(FieldError("spec.retention", "set keepLast, maxAge or both"))
        for path, check in (("spec.schedule", lambda: cron.parse(self.schedule)),
                            ("spec.timeZone", lambda: cron.check_time_zone(self.time_zone))):
            try:
                check()
            except ValueError as exc:
                out.append(FieldError(path, str(exc)))
        if self.retention is not None and self.retention.max_age is not None:
            try:
                if cron.parse_go_duration(self.retention.max_age, days=True) <= 0:
                    out.append(FieldError("spec.retention.maxAge", "must be more than 0"))
            except ValueError as exc:
                out.append(FieldError("spec.retention.maxAge", str(exc)))
        return out

    @model_validator(mode="after")
    def _check_rules(self, info: ValidationInfo) -> "VectorIndexBackupScheduleSpec":
        report_problems(self.problems(), info)
        return self


class VectorIndexBackupScheduleStatus(ApiModel):
    """What the schedule has done, written by the operator."""

    conditions: list[Condition] = Field(
        default_factory=list,
        max_length=16,
        json_schema_extra=_conditions_schema(),
        description=(
            "Ready: the schedule is valid and runs (reasons Scheduled, Suspended, InvalidSpec). "
            "LastBackupSucceeded: whether the latest finished backup is ready."
        ),
    )
    last_schedule_time: Optional[str] = Field(None, json_schema_extra={"format": "date-time"}, description="The scheduled time of the latest backup made.")
    next_schedule_time: Optional[str] = Field(None, json_schema_extra={"format": "date-time"}, description="When the next backup is due.")
    last_successful_backup: Optional[str] = Field(None, description="Name of the newest ready VectorIndexBackup.")
    last_successful_time: Optional[str] = Field(None, json_schema_extra={"format": "date-time"}, description="Scheduled time of that backup.")
    active: Optional[int] = Field(None, ge=0, description="Backups of this schedule still being made.")
    failed: Optional[int] = Field(
        None, ge=0,
        description="Failed backups of this schedule newer than its newest ready one, of those kept (retention keeps the newest failed one).",
    )
    missed: Optional[int] = Field(
        None, ge=0,
        description="Scheduled times skipped since the latest backup was made: the operator was down, the schedule suspended, or a run past its deadline.",
    )
    observed_generation: Optional[int] = Field(None, ge=0, description="The metadata.generation the operator last acted on.")


VECTOR_INDEX_BACKUP_SCHEDULE = ResourceInfo(
    kind="VectorIndexBackupSchedule",
    plural="vectorindexbackupschedules",
    short_names=("vibs",),
    description="Backups of a VectorIndex's Pinecone index on a cron schedule, with retention.",
    spec_model=VectorIndexBackupScheduleSpec,
    status_model=VectorIndexBackupScheduleStatus,
    spec_rules=(
        CelRule(
            rule="!has(self.retention) || has(self.retention.keepLast) || has(self.retention.maxAge)",
            message="retention: set keepLast, maxAge or both",
            field_path=".retention",
        ),
        CelRule(
            rule="!self.schedule.contains('TZ=')",
            message="schedule: cannot use TZ or CRON_TZ in schedule, use timeZone instead",
            field_path=".schedule",
        ),
    ),
    name_max_length=SCHEDULE_NAME_MAX,
    name_hint="short enough for the backups' names, <schedule>-<YYYYMMDDhhmm>",
    printer_columns=(
        PrinterColumn("Index", ".spec.vectorIndexName", "string", "The VectorIndex backed up."),
        PrinterColumn("Schedule", ".spec.schedule", "string", "Cron schedule."),
        PrinterColumn("Suspend", ".spec.suspend", "boolean", "Whether new backups are held."),
        PrinterColumn("Last Schedule", ".status.lastScheduleTime", "date", "Time since the latest backup was due."),
        PrinterColumn("Last Success", ".status.lastSuccessfulTime", "date", "Time since the newest ready backup was due."),
        PrinterColumn("Age", ".metadata.creationTimestamp", "date", "Time since the object was created."),
        PrinterColumn("Next", ".status.nextScheduleTime", "string", "When the next backup is due.", priority=1),
    ),
)
