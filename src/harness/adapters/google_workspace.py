"""Google Workspace Admin SDK Reports activities (`activities.list`: `{"kind": "admin#reports#activities",
"items": [...]}` per page, or one `admin#reports#activity` per line), fanned out to one event per nested event.

Each entry of an activity's `events` becomes its own event, mapped from the activity with `event` set to that
entry and `eventIndex` to its position; the id is `id.uniqueQualifier` + `-` + the position (the qualifier is
shared by the activity's events). `raw` is the whole activity, verbatim. Actor: `actor.email`, else
`actor.profileId`, else `actor.key` (an OAuth client or other key caller); every activity has one, so none
is an error. The event's parameters are projected as `param.<name>` (multi-values joined with `,`), and the
well-known ones also under the shared metadata keys (target_user, role, group, login_type...).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from harness.adapters.fields import AdapterError, get, text
from harness.adapters.table import Derived, Format, Table, array_or_record, first_record, map_record
from harness.text.canonjson import json_type
from harness.text.geo import country_code

ACTIVITY_KIND = "admin#reports#activity"
PAGE_KIND = "admin#reports#activities"

TABLE = Table(
    format="google-workspace",
    source="google-workspace",
    id_path="id.uniqueQualifier",
    time_paths=("id.time",),
    action_path="event.name",
    types={
        "login_success": "login",
        "login_failure": "login_failure",
        "login_verification": "login",
        "2sv_enroll": "mfa_change",
        "2sv_disable": "mfa_change",
        "password_edit": "password_change",
        "account_disabled_password_leak": "user_disabled",
        "suspicious_login": "login",
        "CREATE_USER": "user_created",
        "DELETE_USER": "user_deleted",
        "SUSPEND_USER": "user_disabled",
        "UNSUSPEND_USER": "user_enabled",
        "UNDELETE_USER": "user_enabled",
        "CHANGE_PASSWORD": "password_change",
        "CHANGE_USER_PASSWORD": "password_change",
        "TURN_OFF_2_STEP_VERIFICATION": "mfa_change",
        "ENFORCE_STRONG_AUTHENTICATION": "mfa_change",
        "ASSIGN_ROLE": "role_assignment",
        "GRANT_ADMIN_PRIVILEGE": "role_assignment",
        "GRANT_DELEGATED_ADMIN_PRIVILEGES": "role_assignment",
        "UNASSIGN_ROLE": "role_removal",
        "REVOKE_ADMIN_PRIVILEGE": "role_removal",
        "ADD_PRIVILEGE": "permission_change",
        "REMOVE_PRIVILEGE": "permission_change",
        "CREATE_ROLE": "iam_change",
        "DELETE_ROLE": "iam_change",
        "ADD_GROUP_MEMBER": "member_added",
        "REMOVE_GROUP_MEMBER": "member_removed",
        "add_user": "member_added",
        "remove_user": "member_removed",
        "CREATE_GROUP": "config_change",
        "DELETE_GROUP": "config_change",
        "AUTHORIZE_API_CLIENT_ACCESS": "iam_change",
        "REMOVE_API_CLIENT_ACCESS": "iam_change",
        "authorize": "iam_change",
        "revoke": "iam_change",
        "CHANGE_APPLICATION_SETTING": "config_change",
        "CREATE_APPLICATION_SETTING": "config_change",
        "CHANGE_DOMAIN_SETTING": "config_change",
        "CHANGE_TWO_STEP_VERIFICATION_ENFORCEMENT": "mfa_change",
    },
    fallback_path="id.applicationName",
    fallback_types={"admin": "admin_action", "token": "iam_change"},
    target_paths=("param.USER_EMAIL", "param.GROUP_EMAIL", "param.ROLE_NAME", "param.app_name", "param.DOMAIN_NAME"),
    org_paths=("id.customerId",),
    metadata={
        "ip": ("ipAddress",),
        "principal_id": ("actor.profileId",),
        "actor_type": ("actor.callerType",),
        "application": ("id.applicationName",),
        "event_category": ("event.type",),
        "target_user": ("param.USER_EMAIL",),
        "role": ("param.ROLE_NAME",),
        "group": ("param.GROUP_EMAIL",),
        "login_type": ("param.login_type",),
        "reason": ("param.login_failure_type",),
        "app": ("param.app_name", "param.client_id"),
        "org_unit": ("param.ORG_UNIT_NAME",),
    },
    actor_rule="`actor.email`, else `actor.profileId`, else `actor.key`. Required.",
    derived={
        "location": "ISO 3166 alpha-2 code of `networkInfo.regionCode` (omitted when unknown)",
        "event_index": "the position of the nested event in `events`; the id is `id.uniqueQualifier` + `-` + it",
        "param.<name>": "each parameter of the nested event (`value`, `intValue`, `boolValue`, `multiValue`)",
    },
)


def _value(parameter: dict[str, Any]) -> str:
    for key in ("value", "intValue"):
        found = text(parameter, key)
        if found:
            return found
    flag = parameter.get("boolValue")
    if isinstance(flag, bool):
        return "true" if flag else "false"
    many = parameter.get("multiValue")
    if isinstance(many, list):
        return ",".join(str(item) for item in many if isinstance(item, str | int) and not isinstance(item, bool))
    return ""


def _parameters(event: dict[str, Any], where: str) -> dict[str, str]:
    found = event.get("parameters", [])
    if not isinstance(found, list):
        raise AdapterError(f"{where}.parameters", f"expected an array, got {json_type(found)}")
    return {name: _value(item) for item in found if isinstance(item, dict) and (name := text(item, "name"))}


def _derive(record: dict[str, Any], kind: str) -> Derived:
    actor = text(record, "actor.email", "actor.profileId", "actor.key")
    if not actor:
        raise AdapterError("actor.email", "is required (no email, profileId or key)")
    params = {f"param.{name}": value for name, value in record["param"].items()}
    location = country_code(text(record, "networkInfo.regionCode"))
    return Derived(actor=actor, metadata={"event_index": str(record["eventIndex"]), "location": location, **params})


def to_events(record: Any) -> list[dict[str, Any]]:
    """One activity as its harness events, one per nested event."""
    if not isinstance(record, dict):
        raise AdapterError("", f"a google-workspace record must be a JSON object, got {json_type(record)}")
    nested = get(record, "events")
    if not isinstance(nested, list) or not nested:
        raise AdapterError("events", "expected a non-empty array of events")
    out = []
    for index, event in enumerate(nested):
        where = f"events.{index}"
        if not isinstance(event, dict) or not text(event, "name"):
            raise AdapterError(f"{where}.name", "is required")
        view = {**record, "event": event, "eventIndex": index, "param": _parameters(event, where)}
        mapped = map_record(TABLE, view, _derive)
        if text(record, TABLE.id_path):
            mapped["id"] = f"{mapped['id']}-{index}"
        mapped["payload"]["raw"] = record
        out.append(mapped)
    return out


def detect(document: Any) -> bool:
    """An activity (`kind` admin#reports#activity) or a page of them (`kind` admin#reports#activities)."""
    if isinstance(document, dict) and document.get("kind") == PAGE_KIND:
        return True
    record = first_record(document)
    return isinstance(record, dict) and record.get("kind") == ACTIVITY_KIND


def records(document: Any) -> Iterator[tuple[str, Any]]:
    """A Reports API page (`items`, absent when the page is empty), an array of activities, or one activity."""
    if isinstance(document, dict) and document.get("kind") == PAGE_KIND:
        items = document.get("items", [])
        if not isinstance(items, list):
            raise AdapterError("items", f"expected an array, got {json_type(items)}")
        document = items
    yield from array_or_record(document)


FORMAT = Format("google-workspace", "google-workspace", detect, records, None, TABLE, to_events)
