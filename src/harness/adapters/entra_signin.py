"""Microsoft Entra sign-in logs: Graph `signIn` records, Log Analytics SigninLogs rows (and the non-interactive,
service-principal and managed-identity tables), and the diagnostic-settings envelope (see adapters/azure.py).

Actor: the user principal name, else the service principal's name or id (workload sign-ins), else the user id.
Every sign-in names who signed in, so none is an error. A sign-in whose error code is not 0 is `login_failure`
(Entra records interrupted sign-ins, such as an MFA prompt, with their own non-zero code). `location` is the
alpha-2 code of the sign-in's country.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from harness.adapters import azure
from harness.adapters.azure import both
from harness.adapters.fields import AdapterError, get, text
from harness.adapters.table import Derived, Format, Table, map_record
from harness.text.geo import country_code

CATEGORIES = {
    "signinlogs",
    "noninteractiveusersigninlogs",
    "serviceprincipalsigninlogs",
    "managedidentitysigninlogs",
    "aadnoninteractiveusersigninlogs",
    "aadserviceprincipalsigninlogs",
    "aadmanagedidentitysigninlogs",
}
_ACTOR = both("userPrincipalName", "servicePrincipalName", "servicePrincipalId", "userId")
_ERROR = (*both("status.errorCode"), "resultType")

TABLE = Table(
    format="entra-signin",
    source="azure",
    id_path="id",
    id_alternates=("properties.id",),
    time_paths=(*both("createdDateTime"), "time", "TimeGenerated"),
    action_path="operationName",
    types={},
    default_type="login",
    target_paths=both("appDisplayName", "resourceDisplayName", "appId"),
    org_paths=(*both("tenantId", "homeTenantId", "resourceTenantId"), "AADTenantId"),
    metadata={
        "ip": (*both("ipAddress"), "callerIpAddress"),
        "user_agent": both("userAgent"),
        "principal_id": both("userId", "servicePrincipalId"),
        "display_name": both("userDisplayName"),
        "app": both("appDisplayName"),
        "app_id": both("appId"),
        "resource": both("resourceDisplayName"),
        "client_app": both("clientAppUsed"),
        "reason": (*both("status.failureReason"), "resultDescription"),
        "detail": both("status.additionalDetails"),
        "conditional_access": both("conditionalAccessStatus"),
        "auth_requirement": both("authenticationRequirement"),
        "mfa_method": both("mfaDetail.authMethod"),
        "risk_level": both("riskLevelDuringSignIn"),
        "risk_state": both("riskState"),
        "city": both("location.city", "LocationDetails.city"),
        "device": both("deviceDetail.displayName"),
        "os": both("deviceDetail.operatingSystem"),
        "browser": both("deviceDetail.browser"),
        "correlation_id": both("correlationId"),
        "category": ("category", "Type"),
    },
    actor_rule=(
        "first of `userPrincipalName`, `servicePrincipalName`, `servicePrincipalId`, `userId` (each also under "
        "`properties.`). Required."
    ),
    derived={
        "error_code": "`status.errorCode`, else the Log Analytics or envelope `resultType`",
        "location": "ISO 3166 alpha-2 code of `location.countryOrRegion` (Graph), `LocationDetails.countryOrRegion` "
        "or `Location` (Log Analytics), or the envelope's `location`",
        "type": "`login_failure` when the error code is not 0",
    },
)


def _country(record: dict[str, Any]) -> str:
    for path in (*both("location.countryOrRegion", "LocationDetails.countryOrRegion"), "location"):
        value = get(record, path)
        if isinstance(value, str) and value.strip():
            return country_code(value.strip())
    return ""


def _derive(record: dict[str, Any], kind: str) -> Derived:
    actor = text(record, *_ACTOR)
    if not actor:
        raise AdapterError("userPrincipalName", "is required (no user or service principal names the sign-in)")
    error = text(record, *_ERROR)
    return Derived(
        actor=actor,
        metadata={"error_code": error, "location": _country(record)},
        type="login_failure" if error not in ("", "0") else "",
    )


def to_event(record: Any) -> dict[str, Any]:
    """One sign-in record as a harness event."""
    return map_record(TABLE, record, _derive)


def detect(document: Any) -> bool:
    """A sign-in category or table name, or a Graph signIn (`createdDateTime`, `appId` and a `status` object)."""
    record = azure.sample(document)
    if not isinstance(record, dict):
        return False
    if azure.category(record).lower() in CATEGORIES:
        return True
    return get(record, "createdDateTime") is not None and "appId" in record and isinstance(record.get("status"), dict)


def records(document: Any) -> Iterator[tuple[str, Any]]:
    """A Graph page, a diagnostic-settings blob, an array of rows, or one record."""
    yield from azure.records(document)


FORMAT = Format("entra-signin", "azure", detect, records, to_event, TABLE)
