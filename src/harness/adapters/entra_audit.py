"""Microsoft Entra audit logs: Graph `directoryAudit` records, Log Analytics AuditLogs rows, and the
diagnostic-settings envelope (see adapters/azure.py).

Actor: who `initiatedBy` names: the user's principal name, else the app's service principal name or display
name, else their ids. Every directory audit names its initiator, so none is an error. The target is the first
of `targetResources` (principal name, else display name, else id); `role` is the Role target, else the
`Role.DisplayName` modified property Entra writes on role-membership changes.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from harness.adapters import azure
from harness.adapters.azure import both
from harness.adapters.fields import AdapterError, get, objects, text
from harness.adapters.table import Derived, Format, Table, map_record

_ACTOR = both(
    "initiatedBy.user.userPrincipalName",
    "initiatedBy.app.servicePrincipalName",
    "initiatedBy.app.displayName",
    "initiatedBy.user.id",
    "initiatedBy.app.servicePrincipalId",
    "initiatedBy.app.appId",
)

TABLE = Table(
    format="entra-audit",
    source="azure",
    id_path="id",
    id_alternates=("properties.id",),
    time_paths=(*both("activityDateTime"), "time", "TimeGenerated"),
    action_path="activityDisplayName",
    action_alternates=("properties.activityDisplayName", "operationName"),
    types={
        "Add user": "user_created",
        "Invite external user": "user_created",
        "Delete user": "user_deleted",
        "Hard delete user": "user_deleted",
        "Disable account": "user_disabled",
        "Enable account": "user_enabled",
        "Restore user": "user_enabled",
        "Update user": "admin_action",
        "Reset user password": "password_change",
        "Change user password": "password_change",
        "Reset password (self-service)": "password_change",
        "Change password (self-service)": "password_change",
        "User registered security info": "mfa_change",
        "User deleted security info": "mfa_change",
        "User changed default security info": "mfa_change",
        "Admin registered security info": "mfa_change",
        "Admin deleted security info": "mfa_change",
        "Add member to group": "member_added",
        "Add owner to group": "member_added",
        "Remove member from group": "member_removed",
        "Remove owner from group": "member_removed",
        "Add group": "admin_action",
        "Delete group": "admin_action",
        "Add member to role": "role_assignment",
        "Add eligible member to role": "role_assignment",
        "Add member to role completed (PIM activation)": "role_assignment",
        "Add scoped member to role": "role_assignment",
        "Remove member from role": "role_removal",
        "Remove eligible member from role": "role_removal",
        "Remove scoped member from role": "role_removal",
        "Add application": "service_principal_created",
        "Add service principal": "service_principal_created",
        "Add service principal credentials": "iam_change",
        "Remove service principal credentials": "iam_change",
        "Update application – Certificates and secrets management": "iam_change",
        "Add owner to application": "iam_change",
        "Add owner to service principal": "iam_change",
        "Add federated identity credential": "iam_change",
        "Consent to application": "permission_change",
        "Add app role assignment to service principal": "permission_change",
        "Add app role assignment grant to user": "permission_change",
        "Add delegated permission grant": "permission_change",
        "Add conditional access policy": "config_change",
        "Update conditional access policy": "config_change",
        "Delete conditional access policy": "config_change",
        "Set domain authentication": "config_change",
        "Set federation settings on domain": "config_change",
        "Update authorization policy": "config_change",
        "Set company information": "config_change",
    },
    org_paths=(*both("tenantId"), "AADTenantId", "TenantId"),
    metadata={
        "ip": both("initiatedBy.user.ipAddress"),
        "principal_id": both("initiatedBy.user.id", "initiatedBy.app.servicePrincipalId", "initiatedBy.app.appId"),
        "display_name": both("initiatedBy.user.displayName", "initiatedBy.app.displayName"),
        "outcome": both("result"),
        "reason": both("resultReason"),
        "category": ("properties.category", "category"),
        "service": both("loggedByService"),
        "operation_type": (*both("operationType"), "AADOperationType"),
        "correlation_id": both("correlationId"),
    },
    actor_rule=(
        "first of `initiatedBy.user.userPrincipalName`, `initiatedBy.app.servicePrincipalName`, "
        "`initiatedBy.app.displayName`, `initiatedBy.user.id`, `initiatedBy.app.servicePrincipalId`, "
        "`initiatedBy.app.appId` (each also under `properties.`). Required."
    ),
    derived={
        "target": "the first `targetResources` entry (userPrincipalName, else displayName, else id)",
        "target_user": "the first target of type User",
        "group": "the first target of type Group",
        "app": "the first target of type Application or ServicePrincipal",
        "role": "the first target of type Role, else the `Role.DisplayName` modified property's new value",
    },
)


def _targets(record: dict[str, Any]) -> list[dict[str, Any]]:
    value = get(record, "targetResources")
    if value is None:
        value = get(record, "properties.targetResources")
    return objects(value)


def _name(entity: Any) -> str:
    return text(entity, "userPrincipalName", "displayName", "id")


def _target_of(targets: list[dict[str, Any]], *kinds: str) -> str:
    return next((_name(target) for target in targets if text(target, "type").lower() in kinds), "")


def _modified_role(targets: list[dict[str, Any]]) -> str:
    """Entra writes modified-property values as JSON text, so a role name arrives as `"Global Administrator"`."""
    for target in targets:
        for change in objects(get(target, "modifiedProperties")):
            if text(change, "displayName") == "Role.DisplayName":
                return text(change, "newValue").strip('"').strip()
    return ""


def _derive(record: dict[str, Any], kind: str) -> Derived:
    actor = text(record, *_ACTOR)
    if not actor:
        raise AdapterError("initiatedBy", "is required (no user or app initiated the change)")
    targets = _targets(record)
    return Derived(
        actor=actor,
        metadata={
            "target_user": _target_of(targets, "user"),
            "group": _target_of(targets, "group"),
            "app": _target_of(targets, "application", "serviceprincipal"),
            "role": _target_of(targets, "role") or _modified_role(targets),
        },
        target=_name(targets[0]) if targets else "",
    )


def to_event(record: Any) -> dict[str, Any]:
    """One directory-audit record as a harness event."""
    return map_record(TABLE, record, _derive)


def detect(document: Any) -> bool:
    """An AuditLogs category or table name, or a Graph directoryAudit (`activityDateTime`, `activityDisplayName`,
    and an `initiatedBy` object)."""
    record = azure.sample(document)
    if not isinstance(record, dict):
        return False
    if text(record, "category") == "AuditLogs" and isinstance(record.get("properties"), dict):
        return True
    if text(record, "Type") == "AuditLogs":
        return True
    graph = "activityDateTime" in record and "activityDisplayName" in record
    return graph and isinstance(record.get("initiatedBy"), dict)


def records(document: Any) -> Iterator[tuple[str, Any]]:
    """A Graph page, a diagnostic-settings blob, an array of rows, or one record."""
    yield from azure.records(document)


FORMAT = Format("entra-audit", "azure", detect, records, to_event, TABLE)
