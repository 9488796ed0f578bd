"""Azure Activity Log records: the Azure Monitor REST API's event data, Log Analytics AzureActivity rows, and the
diagnostic-settings envelope a subscription streams to Event Hubs or a storage account (see adapters/azure.py).

Actor: `caller` (a user principal name, or an application id), else the caller's claims (principal name, then
application id, then object id). Platform records (service health, autoscale) name no caller, so the actor may
be empty. Operation names are matched ignoring case because Log Analytics and the envelope upper-case them.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from harness.adapters import azure
from harness.adapters.fields import get, text
from harness.adapters.table import Derived, Format, Table, map_record

CATEGORIES = {"administrative", "security", "servicehealth", "alert", "recommendation", "policy", "autoscale",
              "resourcehealth"}
_UPN = "http://schemas.xmlsoap.org/ws/2005/05/identity/claims/upn"
_OBJECT_ID = "http://schemas.microsoft.com/identity/claims/objectidentifier"

TABLE = Table(
    format="azure-activity",
    source="azure",
    id_path="eventDataId",
    time_paths=("eventTimestamp", "time", "TimeGenerated"),
    action_path="operationName.value",
    action_alternates=("OperationNameValue", "operationName"),
    fold_case=True,
    types={
        "Microsoft.Authorization/roleAssignments/write": "role_assignment",
        "Microsoft.Authorization/roleAssignments/delete": "role_removal",
        "Microsoft.Authorization/roleDefinitions/write": "permission_change",
        "Microsoft.Authorization/roleDefinitions/delete": "permission_change",
        "Microsoft.Authorization/elevateAccess/action": "role_assignment",
        "Microsoft.Authorization/policyAssignments/write": "config_change",
        "Microsoft.Authorization/policyAssignments/delete": "config_change",
        "Microsoft.Authorization/locks/write": "config_change",
        "Microsoft.Authorization/locks/delete": "config_change",
        "Microsoft.Network/networkSecurityGroups/write": "config_change",
        "Microsoft.Network/networkSecurityGroups/securityRules/write": "config_change",
        "Microsoft.Network/networkSecurityGroups/securityRules/delete": "config_change",
        "Microsoft.KeyVault/vaults/write": "config_change",
        "Microsoft.KeyVault/vaults/accessPolicies/write": "permission_change",
        "Microsoft.Storage/storageAccounts/listKeys/action": "iam_change",
        "Microsoft.Storage/storageAccounts/regenerateKey/action": "iam_change",
        "Microsoft.ManagedIdentity/userAssignedIdentities/write": "service_principal_created",
        "Microsoft.Insights/diagnosticSettings/delete": "config_change",
        "Microsoft.Insights/diagnosticSettings/write": "config_change",
    },
    default_type="api_call",
    target_paths=("resourceId", "_ResourceId"),
    org_paths=("subscriptionId", "tenantId"),
    metadata={
        "ip": ("httpRequest.clientIpAddress", "callerIpAddress"),
        "outcome": ("status.value", "ActivityStatusValue", "resultType"),
        "sub_status": ("subStatus.value", "ActivitySubstatusValue", "resultSignature"),
        "category": ("category.value", "CategoryValue", "category"),
        "level": ("level",),
        "resource_group": ("resourceGroupName", "ResourceGroup"),
        "provider": ("resourceProviderName.value", "ResourceProviderValue"),
        "scope": ("authorization.scope", "identity.authorization.scope"),
        "correlation_id": ("correlationId",),
        "operation_id": ("operationId",),
    },
    actor_rule=(
        "`caller` (REST API, Log Analytics `Caller`), else the claims' `upn`, `appid` or object id "
        "(`claims`, or the envelope's `identity.claims`); empty for platform records with no caller"
    ),
    derived={
        "principal_id": "the object id claim",
        "app_id": "the `appid` claim",
    },
)


def _claims(record: dict[str, Any]) -> dict[str, Any]:
    for path in ("claims", "identity.claims"):
        value = get(record, path)
        if isinstance(value, dict):
            return value
    return {}


def _claim(claims: dict[str, Any], key: str) -> str:
    """Claim keys are URIs holding dots, so they are read by exact key rather than by field path."""
    value = claims.get(key)
    return value.strip() if isinstance(value, str) else ""


def _derive(record: dict[str, Any], kind: str) -> Derived:
    claims = _claims(record)
    actor = text(record, "caller") or _claim(claims, _UPN) or _claim(claims, "appid") or _claim(claims, _OBJECT_ID)
    metadata = {"principal_id": _claim(claims, _OBJECT_ID), "app_id": _claim(claims, "appid")}
    return Derived(actor=actor, metadata=metadata)


def to_event(record: Any) -> dict[str, Any]:
    """One Activity Log record as a harness event."""
    return map_record(TABLE, record, _derive)


def detect(document: Any) -> bool:
    """An AzureActivity row, an envelope of an Activity Log category naming a resource operation, or a REST
    record (`eventTimestamp` and an `operationName` object)."""
    record = azure.sample(document)
    if not isinstance(record, dict):
        return False
    if text(record, "Type") == "AzureActivity":
        return True
    envelope = text(record, "category").lower() in CATEGORIES and isinstance(record.get("properties"), dict)
    if envelope and "time" in record and "operationName" in record:
        return True
    return "eventTimestamp" in record and isinstance(record.get("operationName"), dict)


def records(document: Any) -> Iterator[tuple[str, Any]]:
    """A REST page (`value`), a diagnostic-settings blob, an array of rows, or one record."""
    yield from azure.records(document)


FORMAT = Format("azure-activity", "azure", detect, records, to_event, TABLE)
