"""Azure Activity Log records written from the published event-data schema (REST API), the AzureActivity table
columns and the diagnostic-settings schema, in all three shapes, each with the event it maps to."""

from __future__ import annotations

from typing import Any

SUB = "8e1b2c3d-0000-4000-8000-00000000f001"
TENANT = "72f988bf-0000-4000-8000-00000000a001"
UPN = "http://schemas.xmlsoap.org/ws/2005/05/identity/claims/upn"
OID = "http://schemas.microsoft.com/identity/claims/objectidentifier"
JANE_OID = "22222222-bbbb-4000-8000-000000000002"
APP_ID = "a0c8e1f2-0000-4000-8000-0000000000b1"


def claims(upn: str | None, appid: str = "c44b4083-3bb0-49c1-b47d-974e53cbdf3c", oid: str = JANE_OID) -> dict:
    found = {"aud": "https://management.core.windows.net/", "appid": appid, OID: oid, "name": "Jane Doe"}
    if upn:
        found[UPN] = upn
    return found


def resource(n: int, provider: str, kind: str, name: str) -> str:
    return f"/subscriptions/{SUB}/resourceGroups/rg-prod/providers/{provider}/{kind}/{name}{n}"


def rest(
    n: int,
    operation: str,
    target: str,
    *,
    caller: str | None = "jane@contoso.com",
    status: str = "Succeeded",
    category: str = "Administrative",
    who: dict[str, Any] | None = None,
    ip: str | None = "198.51.100.20",
    **extra: Any,
) -> dict[str, Any]:
    """An event-data record as `GET .../providers/Microsoft.Insights/eventtypes/management/values` returns it."""
    provider = operation.split("/")[0]
    event_data_id = f"e1d2c3b4-0000-4000-8000-00000000{n:04d}"
    rec: dict[str, Any] = {
        "authorization": {"action": operation, "scope": target},
        "caller": caller,
        "channels": "Operation",
        "claims": who if who is not None else claims(caller),
        "correlationId": f"c0c0c0c0-0000-4000-8000-00000000{n:04d}",
        "description": "",
        "eventDataId": event_data_id,
        "eventName": {"value": "EndRequest", "localizedValue": "End request"},
        "category": {"value": category, "localizedValue": category},
        "eventTimestamp": f"2026-04-10T09:{n:02d}:00.1234567Z",
        "id": f"{target}/events/{event_data_id}/ticks/638483{n:06d}",
        "level": "Informational" if status == "Succeeded" else "Error",
        "operationId": f"0p0p0p0p-0000-4000-8000-00000000{n:04d}",
        "operationName": {"value": operation, "localizedValue": operation},
        "resourceGroupName": "rg-prod",
        "resourceProviderName": {"value": provider, "localizedValue": provider},
        "resourceType": {"value": "/".join(operation.split("/")[:2]), "localizedValue": ""},
        "resourceId": target,
        "status": {"value": status, "localizedValue": status},
        "subStatus": {"value": "Created" if status == "Succeeded" else "", "localizedValue": ""},
        "submissionTimestamp": f"2026-04-10T09:{n:02d}:30Z",
        "subscriptionId": SUB,
        "tenantId": TENANT,
        "httpRequest": {"clientRequestId": f"cr{n}", "clientIpAddress": ip, "method": "PUT"},
        "properties": {"statusCode": "Created" if status == "Succeeded" else "Forbidden"},
    }
    rec.update(extra)
    return {key: value for key, value in rec.items() if value is not ...}


def log_analytics(n: int, operation: str, target: str, caller: str, status: str = "Success") -> dict[str, Any]:
    """An AzureActivity row (operation names upper-cased, as the table stores them)."""
    return {
        "TenantId": TENANT,
        "SourceSystem": "Azure",
        "TimeGenerated": f"2026-04-10T10:{n:02d}:00.5Z",
        "CallerIpAddress": "203.0.113.7",
        "CategoryValue": "Administrative",
        "CorrelationId": f"c0c0c0c0-0000-4000-8000-00000000{n:04d}",
        "Authorization": "",
        "Level": "Informational",
        "OperationNameValue": operation.upper(),
        "OperationName": "Create role assignment",
        "Properties": "{}",
        "ActivityStatusValue": status,
        "ActivitySubstatusValue": "",
        "Caller": caller,
        "EventSubmissionTimestamp": f"2026-04-10T10:{n:02d}:20Z",
        "ResourceGroup": "RG-PROD",
        "ResourceProviderValue": operation.split("/")[0].upper(),
        "EventDataId": f"1a2b3c4d-0000-4000-8000-00000000{n:04d}",
        "SubscriptionId": SUB,
        "_ResourceId": target.lower(),
        "Type": "AzureActivity",
    }


def envelope(n: int, operation: str, target: str, result: str = "Success", who: dict | None = None) -> dict:
    """A subscription's Activity Log streamed through diagnostic settings."""
    return {
        "time": f"2026-04-10T11:{n:02d}:00.9Z",
        "resourceId": target.upper(),
        "operationName": operation.upper(),
        "category": "Administrative",
        "resultType": result,
        "resultSignature": "Succeeded.Created" if result == "Success" else "Failed.Forbidden",
        "durationMs": "125",
        "callerIpAddress": "192.0.2.9",
        "correlationId": f"c0c0c0c0-0000-4000-8000-00000000{n:04d}",
        "identity": {
            "authorization": {"scope": target, "action": operation, "evidence": {"role": "Owner"}},
            "claims": who if who is not None else claims("jane@contoso.com"),
        },
        "level": "Information",
        "location": "global",
        "properties": {"statusCode": "Created", "eventCategory": "Administrative", "entity": target},
    }


def event(rec: dict[str, Any], kind: str, actor: str, action: str, target: str, meta: dict[str, str], *,
          timestamp: str, org: str = "") -> dict[str, Any]:
    vid = rec.get("eventDataId") or rec.get("EventDataId")
    return {
        "id": f"azure-activity-{vid}" if vid else "azure-activity-sha256-",
        "timestamp": timestamp,
        "source": "azure",
        "type": kind,
        "actor": actor,
        "org": org,
        "payload": {
            "action": action,
            "target": target,
            "metadata": dict(sorted({k: v for k, v in meta.items() if v}.items())),
        },
    }


RA = "Microsoft.Authorization/roleAssignments/write"
VM = resource(0, "Microsoft.Compute", "virtualMachines", "vm-web")
# (operation, target, type, extra rest() arguments, actor, metadata changes)
REST: list[tuple[Any, ...]] = [
    (RA, f"/subscriptions/{SUB}/providers/Microsoft.Authorization/roleAssignments/ra1", "role_assignment", {}),
    ("Microsoft.Authorization/roleAssignments/delete",
     f"/subscriptions/{SUB}/providers/Microsoft.Authorization/roleAssignments/ra1", "role_removal", {}),
    ("Microsoft.Authorization/roleDefinitions/write",
     f"/subscriptions/{SUB}/providers/Microsoft.Authorization/roleDefinitions/rd1", "permission_change", {}),
    ("Microsoft.Authorization/elevateAccess/action", "/providers/Microsoft.Authorization", "role_assignment",
     {"subscriptionId": ..., "resourceGroupName": ...}),
    ("Microsoft.Compute/virtualMachines/write", VM, "api_call", {}),
    ("Microsoft.Compute/virtualMachines/delete", VM, "api_call", {"status": "Failed"}),
    ("Microsoft.Network/networkSecurityGroups/securityRules/write",
     resource(7, "Microsoft.Network", "networkSecurityGroups", "nsg-web") + "/securityRules/allow-rdp",
     "config_change", {}),
    ("Microsoft.KeyVault/vaults/accessPolicies/write", resource(8, "Microsoft.KeyVault", "vaults", "kv-prod"),
     "permission_change", {}),
    ("Microsoft.Storage/storageAccounts/listKeys/action",
     resource(9, "Microsoft.Storage", "storageAccounts", "stprod"), "iam_change", {}),
    ("Microsoft.ManagedIdentity/userAssignedIdentities/write",
     resource(10, "Microsoft.ManagedIdentity", "userAssignedIdentities", "id-deploy"), "service_principal_created",
     {}),
    ("Microsoft.Insights/diagnosticSettings/delete", VM + "/providers/Microsoft.Insights/diagnosticSettings/ds",
     "config_change", {}),
    ("Microsoft.Authorization/policyAssignments/write",
     f"/subscriptions/{SUB}/providers/Microsoft.Authorization/policyAssignments/pa1", "config_change", {}),
    ("Microsoft.Web/sites/write", resource(13, "Microsoft.Web", "sites", "app-prod"), "api_call",
     {"caller": APP_ID, "who": claims(None, appid=APP_ID, oid="f1e2d3c4-0000-4000-8000-0000000000b2")}),
    ("Microsoft.Web/sites/restart/action", resource(14, "Microsoft.Web", "sites", "app-prod"), "api_call",
     {"caller": ..., "who": claims("ops@contoso.com")}),
    ("Microsoft.Compute/virtualMachines/start/action", VM, "api_call", {"ip": None, "eventDataId": ...}),
    ("Microsoft.ServiceHealth/incident/action", f"/subscriptions/{SUB}", "api_call",
     {"caller": ..., "who": {}, "ip": None, "category": "ServiceHealth"}),
]


def _rest_case(n: int, spec: tuple[Any, ...]) -> tuple[dict[str, Any], dict[str, Any]]:
    operation, target, kind, extra = spec
    rec = rest(n, operation, target, **extra)
    who = rec["claims"]
    actor = rec.get("caller") or who.get(UPN) or who.get("appid") or ""
    status = rec["status"]["value"]
    meta = {
        "ip": rec["httpRequest"]["clientIpAddress"] or "",
        "outcome": status,
        "sub_status": rec["subStatus"]["value"],
        "category": rec["category"]["value"],
        "level": rec["level"],
        "resource_group": rec.get("resourceGroupName", ""),
        "provider": operation.split("/")[0],
        "scope": target,
        "correlation_id": rec["correlationId"],
        "operation_id": rec["operationId"],
        "principal_id": who.get(OID, ""),
        "app_id": who.get("appid", ""),
    }
    org = rec.get("subscriptionId") or TENANT
    return rec, event(rec, kind, actor, operation, target, meta, timestamp=f"2026-04-10T09:{n:02d}:00.123456Z",
                      org=org)


KIND = {operation: kind for operation, _, kind, _ in REST} | {
    "Microsoft.KeyVault/vaults/write": "config_change",
    "Microsoft.Network/networkSecurityGroups/write": "config_change",
    "Microsoft.Authorization/locks/delete": "config_change",
}


def _cases() -> list[tuple[dict[str, Any], dict[str, Any]]]:
    c = [_rest_case(n, spec) for n, spec in enumerate(REST, 1)]
    for n, (operation, index, caller, status) in enumerate(
        ((RA, 0, "jane@contoso.com", "Success"), (RA, 0, "jane@contoso.com", "Failure"),
         ("Microsoft.Compute/virtualMachines/write", 4, "ops@contoso.com", "Start"),
         ("Microsoft.Storage/storageAccounts/listKeys/action", 8, APP_ID, "Success"),
         ("Microsoft.KeyVault/vaults/write", 7, "jane@contoso.com", "Success"),
         ("Microsoft.Authorization/roleAssignments/delete", 1, "ops@contoso.com", "Success"),
         ("Microsoft.Network/networkSecurityGroups/write", 6, "ops@contoso.com", "Success")), 20):
        target = REST[index][1]
        rec = log_analytics(n, operation, target, caller, status)
        kind = KIND[operation]
        meta = {"ip": "203.0.113.7", "outcome": status, "category": "Administrative", "level": "Informational",
                "resource_group": "RG-PROD", "provider": operation.split("/")[0].upper(),
                "correlation_id": rec["CorrelationId"]}
        c.append((rec, event(rec, kind, caller, operation.upper(), target.lower(), meta,
                             timestamp=f"2026-04-10T10:{n:02d}:00.5Z", org=SUB)))
    for n, (operation, index, result, who, actor) in enumerate(
        ((RA, 0, "Success", None, "jane@contoso.com"), (RA, 0, "Start", None, "jane@contoso.com"),
         ("Microsoft.Compute/virtualMachines/delete", 4, "Failure", None, "jane@contoso.com"),
         ("Microsoft.Web/sites/write", 12, "Success", claims(None, appid=APP_ID), APP_ID),
         ("Microsoft.Authorization/roleDefinitions/write", 2, "Success", {OID: JANE_OID}, JANE_OID),
         ("Microsoft.Insights/diagnosticSettings/delete", 10, "Success", None, "jane@contoso.com"),
         ("Microsoft.Authorization/locks/delete", 0, "Success", None, "jane@contoso.com")), 40):
        target = REST[index][1]
        rec = envelope(n, operation, target, result, who)
        kind = KIND[operation]
        used = rec["identity"]["claims"]
        meta = {"ip": "192.0.2.9", "outcome": result, "sub_status": rec["resultSignature"],
                "category": "Administrative", "level": "Information", "scope": target,
                "correlation_id": rec["correlationId"], "principal_id": used.get(OID, ""),
                "app_id": used.get("appid", "")}
        c.append((rec, event(rec, kind, actor, operation.upper(), target.upper(), meta,
                             timestamp=f"2026-04-10T11:{n:02d}:00.9Z")))
    return c


CASES = _cases()
