"""Entra audit records written from the published Graph directoryAudit resource, the AuditLogs table columns and
the diagnostic-settings schema, in all three shapes, each with the event it maps to."""

from __future__ import annotations

from typing import Any

TENANT = "72f988bf-0000-4000-8000-00000000a001"
ADMIN = {"id": "22222222-bbbb-4000-8000-000000000001", "displayName": "Ada Admin",
         "userPrincipalName": "admin@contoso.com", "ipAddress": "198.51.100.5"}
JANE = {"id": "22222222-bbbb-4000-8000-000000000002", "displayName": "Jane Doe",
        "userPrincipalName": "jane@contoso.com", "ipAddress": "203.0.113.7"}
PIM = {"appId": None, "displayName": "MS-PIM", "servicePrincipalId": "33333333-cccc-4000-8000-000000000001",
       "servicePrincipalName": None}
SYNC = {"appId": "cb1056e2-e479-49de-ae31-7812af012ed8", "displayName": "Azure AD Connect",
        "servicePrincipalId": "33333333-cccc-4000-8000-000000000002", "servicePrincipalName": "aadconnect-sync"}


def user_target(upn: str, n: int, changes: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    return {"id": f"44444444-dddd-4000-8000-00000000{n:04d}", "displayName": upn.split("@")[0].title(),
            "type": "User", "userPrincipalName": upn, "groupType": None, "modifiedProperties": changes or []}


def other_target(kind: str, name: str, n: int) -> dict[str, Any]:
    return {"id": f"55555555-eeee-4000-8000-00000000{n:04d}", "displayName": name, "type": kind,
            "userPrincipalName": None, "modifiedProperties": []}


def initiated(user: dict[str, Any] | None = None, app: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"user": user, "app": app}


def graph(
    n: int,
    activity: str,
    by: dict[str, Any],
    targets: list[dict[str, Any]],
    *,
    category: str = "UserManagement",
    operation: str = "Add",
    result: str = "success",
    reason: str = "",
    **extra: Any,
) -> dict[str, Any]:
    rec: dict[str, Any] = {
        "id": f"Directory_{n:04d}_ABCDE",
        "category": category,
        "correlationId": f"c0rre1a7-0000-4000-8000-00000000{n:04d}",
        "result": result,
        "resultReason": reason,
        "activityDisplayName": activity,
        "activityDateTime": f"2026-04-10T09:{n:02d}:00.1234567Z",
        "loggedByService": "Core Directory",
        "operationType": operation,
        "initiatedBy": by,
        "targetResources": targets,
        "additionalDetails": [{"key": "User-Agent", "value": "Mozilla/5.0"}],
    }
    rec.update(extra)
    return {key: value for key, value in rec.items() if value is not ...}


def log_analytics(n: int, props: dict[str, Any]) -> dict[str, Any]:
    """An AuditLogs row as a Log Analytics query exports it (PascalCase columns)."""
    return {
        "TenantId": TENANT,
        "SourceSystem": "Azure AD",
        "TimeGenerated": f"2026-04-10T10:{n:02d}:00.5Z",
        "ResourceId": f"/tenants/{TENANT}/providers/Microsoft.aadiam",
        "OperationName": props["activityDisplayName"],
        "OperationVersion": "1.0",
        "Category": props["category"],
        "ResultType": "",
        "ResultSignature": "None",
        "ResultDescription": "",
        "DurationMs": 0,
        "CorrelationId": props["correlationId"],
        "Resource": "Microsoft.aadiam",
        "ResourceGroup": "Microsoft.aadiam",
        "Identity": "",
        "Level": "4",
        "AdditionalDetails": props["additionalDetails"],
        "Id": props["id"].replace("Directory_", "DirectoryLA_"),
        "InitiatedBy": props["initiatedBy"],
        "LoggedByService": props["loggedByService"],
        "Result": props["result"],
        "ResultReason": props["resultReason"],
        "TargetResources": props["targetResources"],
        "AADTenantId": TENANT,
        "ActivityDisplayName": props["activityDisplayName"],
        "ActivityDateTime": f"2026-04-10T10:{n:02d}:00Z",
        "AADOperationType": props["operationType"],
        "Type": "AuditLogs",
    }


def envelope(n: int, props: dict[str, Any]) -> dict[str, Any]:
    """A diagnostic-settings record (Event Hubs / storage account) around a Graph-shaped `properties`."""
    return {
        "time": f"2026-04-10T11:{n:02d}:00.9Z",
        "resourceId": f"/tenants/{TENANT}/providers/Microsoft.aadiam",
        "operationName": props["activityDisplayName"],
        "operationVersion": "1.0",
        "category": "AuditLogs",
        "tenantId": TENANT,
        "resultSignature": "None",
        "durationMs": 0,
        "callerIpAddress": "<null>",
        "correlationId": props["correlationId"],
        "Level": "Informational",
        "properties": {
            **props,
            "id": props["id"].replace("Directory_", "DirectoryEH_"),
            "activityDateTime": f"2026-04-10T11:{n:02d}:00Z",
        },
    }


def event(
    rec: dict[str, Any],
    kind: str,
    actor: str,
    target: str,
    metadata: dict[str, str],
    *,
    timestamp: str,
    org: str = "",
) -> dict[str, Any]:
    props = rec.get("properties", rec)
    vid = rec.get("id") or rec.get("Id") or props.get("id")
    return {
        "id": f"entra-audit-{vid}" if vid else "entra-audit-sha256-",
        "timestamp": timestamp,
        "source": "azure",
        "type": kind,
        "actor": actor,
        "org": org,
        "payload": {
            "action": props.get("activityDisplayName") or rec.get("ActivityDisplayName"),
            "target": target,
            "metadata": dict(sorted({k: v for k, v in metadata.items() if v}.items())),
        },
    }


def meta(props: dict[str, Any], ip: str = "", **extra: str) -> dict[str, str]:
    by = props["initiatedBy"]
    who = by["user"] or by["app"]
    return {
        "ip": ip,
        "principal_id": who.get("id") or who.get("servicePrincipalId") or who.get("appId") or "",
        "display_name": who.get("displayName") or "",
        "outcome": props["result"],
        "reason": props["resultReason"],
        "category": props["category"],
        "service": "Core Directory",
        "operation_type": props["operationType"],
        "correlation_id": props["correlationId"],
        **extra,
    }


NEWBIE = "newbie@contoso.com"
ENG = other_target("Group", "Engineering", 1)
GA = other_target("Role", "Global Administrator", 2)
PAYAPP = other_target("Application", "payments-api", 3)
PAYSP = other_target("ServicePrincipal", "payments-api", 4)
ROLE_CHANGE = [{"displayName": "Role.DisplayName", "oldValue": None, "newValue": '"Global Administrator"'}]

# (activity, initiator, targets, category, operationType, type, actor, target, derived metadata, extra fields)
GRAPH: list[tuple[Any, ...]] = [
    ("Add user", initiated(ADMIN), [user_target(NEWBIE, 1)], "UserManagement", "Add", "user_created",
     ADMIN["userPrincipalName"], NEWBIE, {"target_user": NEWBIE}, {}),
    ("Delete user", initiated(ADMIN), [user_target(NEWBIE, 1)], "UserManagement", "Delete", "user_deleted",
     ADMIN["userPrincipalName"], NEWBIE, {"target_user": NEWBIE}, {}),
    ("Hard delete user", initiated(ADMIN), [user_target(NEWBIE, 1)], "UserManagement", "Delete", "user_deleted",
     ADMIN["userPrincipalName"], NEWBIE, {"target_user": NEWBIE}, {}),
    ("Disable account", initiated(ADMIN), [user_target("jane@contoso.com", 2)], "UserManagement", "Update",
     "user_disabled", ADMIN["userPrincipalName"], "jane@contoso.com", {"target_user": "jane@contoso.com"}, {}),
    ("Reset user password", initiated(ADMIN), [user_target("jane@contoso.com", 2)], "UserManagement", "Update",
     "password_change", ADMIN["userPrincipalName"], "jane@contoso.com", {"target_user": "jane@contoso.com"}, {}),
    ("User registered security info", initiated(JANE), [user_target("jane@contoso.com", 2)],
     "UserManagement", "Add", "mfa_change", "jane@contoso.com", "jane@contoso.com",
     {"target_user": "jane@contoso.com"}, {"loggedByService": ...}),
    ("Add member to group", initiated(ADMIN), [user_target("jane@contoso.com", 2), ENG], "GroupManagement",
     "Assign", "member_added", ADMIN["userPrincipalName"], "jane@contoso.com",
     {"target_user": "jane@contoso.com", "group": "Engineering"}, {}),
    ("Remove member from group", initiated(ADMIN), [user_target("jane@contoso.com", 2), ENG], "GroupManagement",
     "Unassign", "member_removed", ADMIN["userPrincipalName"], "jane@contoso.com",
     {"target_user": "jane@contoso.com", "group": "Engineering"}, {}),
    ("Add member to role", initiated(ADMIN), [user_target("jane@contoso.com", 2, ROLE_CHANGE)], "RoleManagement",
     "Assign", "role_assignment", ADMIN["userPrincipalName"], "jane@contoso.com",
     {"target_user": "jane@contoso.com", "role": "Global Administrator"}, {}),
    ("Remove member from role", initiated(ADMIN), [GA, user_target("jane@contoso.com", 2)], "RoleManagement",
     "Unassign", "role_removal", ADMIN["userPrincipalName"], "Global Administrator",
     {"target_user": "jane@contoso.com", "role": "Global Administrator"}, {}),
    ("Add application", initiated(ADMIN), [PAYAPP], "ApplicationManagement", "Add", "service_principal_created",
     ADMIN["userPrincipalName"], "payments-api", {"app": "payments-api"}, {}),
    ("Add service principal", initiated(app=SYNC), [PAYSP], "ApplicationManagement", "Add",
     "service_principal_created", "aadconnect-sync", "payments-api", {"app": "payments-api"}, {}),
    ("Add service principal credentials", initiated(ADMIN), [PAYSP], "ApplicationManagement", "Update",
     "iam_change", ADMIN["userPrincipalName"], "payments-api", {"app": "payments-api"}, {}),
    ("Consent to application", initiated(JANE), [PAYSP], "ApplicationManagement", "Assign", "permission_change",
     "jane@contoso.com", "payments-api", {"app": "payments-api"}, {}),
    ("Update conditional access policy", initiated(ADMIN), [other_target("Policy", "Require MFA", 5)], "Policy",
     "Update", "config_change", ADMIN["userPrincipalName"], "Require MFA", {}, {}),
    ("Update user", initiated(ADMIN), [user_target("jane@contoso.com", 2)], "UserManagement", "Update",
     "admin_action", ADMIN["userPrincipalName"], "jane@contoso.com", {"target_user": "jane@contoso.com"},
     {"result": "failure", "resultReason": "Insufficient privileges"}),
    ("Update StsRefreshTokenValidFrom Timestamp", initiated(ADMIN), [user_target("jane@contoso.com", 2)],
     "UserManagement", "Update", "other", ADMIN["userPrincipalName"], "jane@contoso.com",
     {"target_user": "jane@contoso.com"}, {}),
    ("Add user", initiated(ADMIN), [user_target("temp@contoso.com", 6)], "UserManagement", "Add", "user_created",
     ADMIN["userPrincipalName"], "temp@contoso.com", {"target_user": "temp@contoso.com"}, {"id": ...}),
    ("Add member to role completed (PIM activation)", initiated(app=PIM), [GA, user_target("jane@contoso.com", 2)],
     "RoleManagement", "Add", "role_assignment", "MS-PIM", "Global Administrator",
     {"target_user": "jane@contoso.com", "role": "Global Administrator"}, {"loggedByService": "PIM"}),
    ("Set company information", initiated(ADMIN), [], "DirectoryManagement", "Update", "config_change",
     ADMIN["userPrincipalName"], "", {}, {}),
    ("Invite external user", initiated(JANE), [user_target("guest_fabrikam.com#EXT#@contoso.com", 7)],
     "UserManagement", "Add", "user_created", "jane@contoso.com", "guest_fabrikam.com#EXT#@contoso.com",
     {"target_user": "guest_fabrikam.com#EXT#@contoso.com"}, {}),
]
LOG_ANALYTICS = (0, 6, 8, 1, 12)  # rows built from these GRAPH entries
ENVELOPES = (0, 7, 11, 4, 18, 16)


def _cases() -> list[tuple[dict[str, Any], dict[str, Any]]]:
    c: list[tuple[dict[str, Any], dict[str, Any]]] = []
    built = []
    for n, (activity, by, targets, category, op, kind, actor, target, derived, extra) in enumerate(GRAPH, 1):
        rec = graph(n, activity, by, targets, category=category, operation=op, **extra)
        built.append(rec)
        ip = (by["user"] or {}).get("ipAddress", "")
        service = "" if "loggedByService" in extra else "Core Directory"
        metadata = meta(rec, ip, **derived, service=rec.get("loggedByService", service))
        c.append((rec, event(rec, kind, actor, target, metadata, timestamp=f"2026-04-10T09:{n:02d}:00.123456Z")))
    for n, index in enumerate(LOG_ANALYTICS, 30):
        props = built[index]
        _, by, _, _, _, kind, actor, target, derived, _ = GRAPH[index]
        rec = log_analytics(n, props)
        ip = (by["user"] or {}).get("ipAddress", "")
        metadata = meta(props, ip, **derived)
        c.append((rec, event(rec, kind, actor, target, metadata, timestamp=f"2026-04-10T10:{n:02d}:00Z", org=TENANT)))
    for n, index in enumerate(ENVELOPES, 40):
        props = built[index]
        _, by, _, _, _, kind, actor, target, derived, _ = GRAPH[index]
        rec = envelope(n, props)
        ip = (by["user"] or {}).get("ipAddress", "")  # the envelope writes callerIpAddress "<null>"
        metadata = meta(props, ip, **derived, service=props.get("loggedByService", ""))
        c.append((rec, event(rec, kind, actor, target, metadata, timestamp=f"2026-04-10T11:{n:02d}:00Z", org=TENANT)))
    return c


CASES = _cases()
