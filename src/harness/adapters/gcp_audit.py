"""Google Cloud Audit Logs LogEntry records (`gcloud logging read --format=json`: an array; a Logging API
`entries.list` page: `{"entries": [...]}`; a Cloud Storage or Pub/Sub sink: one entry per line).

Actor: `protoPayload.authenticationInfo.principalEmail`, else `principalSubject`; Cloud Audit Logs leave it
out for anonymous callers and redact some third-party principals, so an empty actor is kept empty rather than
refused. Time: `timestamp`, else `receiveTimestamp`. Target: `protoPayload.resourceName`. A `SetIamPolicy`
whose `serviceData.policyDelta` (or `metadata.policyDelta`) only adds bindings is a
`role_assignment`, one that only removes them a `role_removal`; the first binding names the role and member.
Every entry records an API call, so an unlisted method is `api_call`.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from harness.adapters.fields import get, objects, text
from harness.adapters.table import Derived, Format, Table, array_or_record, first_record, listed, map_record

_POLICY_DELTAS = (
    "protoPayload.serviceData.policyDelta.bindingDeltas",
    "protoPayload.metadata.policyDelta.bindingDeltas",
)
_BY_DELTA = {"ADD": "role_assignment", "REMOVE": "role_removal"}

TABLE = Table(
    format="gcp-audit",
    source="gcp",
    id_path="insertId",
    time_paths=("timestamp", "receiveTimestamp"),
    action_path="protoPayload.methodName",
    types={
        "google.login.LoginService.loginSuccess": "login",
        "google.login.LoginService.loginFailure": "login_failure",
        "google.login.LoginService.2svEnroll": "mfa_change",
        "google.login.LoginService.2svDisable": "mfa_change",
        "google.login.LoginService.passwordEdit": "password_change",
        "google.admin.AdminService.createUser": "user_created",
        "google.admin.AdminService.deleteUser": "user_deleted",
        "google.admin.AdminService.suspendUser": "user_disabled",
        "google.admin.AdminService.unsuspendUser": "user_enabled",
        "google.admin.AdminService.addGroupMember": "member_added",
        "google.admin.AdminService.removeGroupMember": "member_removed",
        "google.admin.AdminService.assignRole": "role_assignment",
        "google.admin.AdminService.unassignRole": "role_removal",
        "SetIamPolicy": "permission_change",
        "google.iam.admin.v1.SetIAMPolicy": "permission_change",
        "storage.setIamPermissions": "permission_change",
        "v1.compute.instances.setIamPolicy": "permission_change",
        "google.iam.admin.v1.CreateServiceAccount": "service_principal_created",
        "google.iam.admin.v1.DeleteServiceAccount": "iam_change",
        "google.iam.admin.v1.CreateServiceAccountKey": "iam_change",
        "google.iam.admin.v1.DeleteServiceAccountKey": "iam_change",
        "google.iam.admin.v1.UploadServiceAccountKey": "iam_change",
        "google.iam.admin.v1.CreateRole": "iam_change",
        "google.iam.admin.v1.UpdateRole": "iam_change",
        "google.iam.admin.v1.DeleteRole": "iam_change",
        "GenerateAccessToken": "assume_role",
        "google.iam.credentials.v1.IAMCredentials.GenerateAccessToken": "assume_role",
        "google.iam.credentials.v1.IAMCredentials.SignJwt": "assume_role",
        "v1.compute.firewalls.insert": "config_change",
        "v1.compute.firewalls.patch": "config_change",
        "v1.compute.firewalls.delete": "config_change",
        "v1.compute.instances.insert": "config_change",
        "v1.compute.instances.delete": "config_change",
        "storage.buckets.create": "config_change",
        "storage.buckets.delete": "config_change",
        "storage.buckets.update": "config_change",
        "google.logging.v2.ConfigServiceV2.DeleteSink": "config_change",
        "google.logging.v2.ConfigServiceV2.UpdateSink": "config_change",
        "CreateProject": "admin_action",
        "DeleteProject": "admin_action",
    },
    default_type="api_call",
    target_paths=("protoPayload.resourceName",),
    org_paths=("resource.labels.project_id", "resource.labels.organization_id"),
    metadata={
        "ip": ("protoPayload.requestMetadata.callerIp",),
        "user_agent": ("protoPayload.requestMetadata.callerSuppliedUserAgent",),
        "principal_id": ("protoPayload.authenticationInfo.principalSubject",),
        "service": ("protoPayload.serviceName",),
        "resource_type": ("resource.type",),
        "severity": ("severity",),
        "log_name": ("logName",),
        "status": ("protoPayload.status.code",),
        "reason": ("protoPayload.status.message",),
        "iam_permission": ("protoPayload.authorizationInfo.0.permission",),
        "service_account_key": ("protoPayload.authenticationInfo.serviceAccountKeyName",),
        "caller": (
            "protoPayload.authenticationInfo.serviceAccountDelegationInfo.0.firstPartyPrincipal.principalEmail",
        ),
    },
    actor_rule=(
        "`protoPayload.authenticationInfo.principalEmail`, else `principalSubject`; may be empty "
        "(anonymous or redacted callers)."
    ),
    derived={
        "role": "the role of the first `policyDelta.bindingDeltas` entry (in `serviceData` or `metadata`)",
        "target_user": "the member of that binding delta (for example `user:bob@example.com`)",
        "type": "`role_assignment` when the binding deltas only ADD, `role_removal` when they only REMOVE",
    },
)


def _deltas(record: dict[str, Any]) -> list[dict[str, Any]]:
    for path in _POLICY_DELTAS:
        value = get(record, path)
        if isinstance(value, list):
            return objects(value)
    return []


def _derive(record: dict[str, Any], kind: str) -> Derived:
    deltas = _deltas(record)
    actions = {text(delta, "action").upper() for delta in deltas}
    override = _BY_DELTA.get(actions.pop(), "") if len(actions) == 1 else ""
    first = deltas[0] if deltas else {}
    return Derived(
        actor=text(
            record, "protoPayload.authenticationInfo.principalEmail", "protoPayload.authenticationInfo.principalSubject"
        ),
        metadata={"role": text(first, "role"), "target_user": text(first, "member")},
        type=override,
    )


def to_event(record: Any) -> dict[str, Any]:
    """One audit LogEntry as a harness event."""
    return map_record(TABLE, record, _derive)


def _is_entry(record: Any) -> bool:
    payload = record.get("protoPayload") if isinstance(record, dict) else None
    return (
        isinstance(payload, dict)
        and any(key in payload for key in ("methodName", "serviceName"))
        and any(key in record for key in ("insertId", "logName"))
    )


def detect(document: Any) -> bool:
    """A LogEntry with an audit `protoPayload` (`methodName` or `serviceName`) and `insertId` or `logName`, or
    an `entries.list` page of them."""
    if isinstance(document, dict) and isinstance(document.get("entries"), list):
        return bool(document["entries"]) and _is_entry(document["entries"][0])
    return _is_entry(first_record(document))


def records(document: Any) -> Iterator[tuple[str, Any]]:
    """An `entries.list` page, an array of entries, or one entry."""
    if isinstance(document, dict) and "entries" in document and "protoPayload" not in document:
        yield from listed(document, "entries")
    else:
        yield from array_or_record(document)


FORMAT = Format("gcp-audit", "gcp", detect, records, to_event, TABLE)
