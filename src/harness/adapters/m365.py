"""Microsoft 365 Unified Audit Log records: the Office 365 Management Activity API's content blobs (arrays of
records, or one per line), and audit search results (`Search-UnifiedAuditLog`, Purview exports), whose items
hold the record as a JSON string in `AuditData`.

Actor: `UserId` (a user principal name, a service principal, or an Exchange system account). Every audit
record names it, so none is an error. The target is `ObjectId` (the file, mailbox, user or group acted on).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from harness.adapters.fields import AdapterError, embedded_record, get, objects, text
from harness.adapters.table import Derived, Format, Table, array_or_record, first_record, map_record

_WRAPPED = "AuditData"

TABLE = Table(
    format="m365",
    source="m365",
    id_path="Id",
    time_paths=("CreationTime",),
    action_path="Operation",
    types={
        "UserLoggedIn": "login",
        "UserLoginFailed": "login_failure",
        "Add user.": "user_created",
        "Delete user.": "user_deleted",
        "Disable account.": "user_disabled",
        "Enable account.": "user_enabled",
        "Update user.": "admin_action",
        "Reset user password.": "password_change",
        "Change user password.": "password_change",
        "Set force change user password.": "password_change",
        "Update StsRefreshTokenValidFrom Timestamp.": "iam_change",
        "Add member to group.": "member_added",
        "Remove member from group.": "member_removed",
        "MemberAdded": "member_added",
        "MemberRemoved": "member_removed",
        "Add member to role.": "role_assignment",
        "Remove member from role.": "role_removal",
        "Add-RoleGroupMember": "role_assignment",
        "Remove-RoleGroupMember": "role_removal",
        "Add service principal.": "service_principal_created",
        "Add application.": "service_principal_created",
        "Add service principal credentials.": "iam_change",
        "Consent to application.": "permission_change",
        "Add-MailboxPermission": "permission_change",
        "Remove-MailboxPermission": "permission_change",
        "Add-RecipientPermission": "permission_change",
        "SharingSet": "permission_change",
        "AnonymousLinkCreated": "permission_change",
        "AddedToSecureLink": "permission_change",
        "New-InboxRule": "config_change",
        "Set-InboxRule": "config_change",
        "UpdateInboxRules": "config_change",
        "Set-Mailbox": "config_change",
        "New-TransportRule": "config_change",
        "Set-AdminAuditLogConfig": "config_change",
        "Set-OrganizationConfig": "config_change",
        "TeamCreated": "admin_action",
        "TeamDeleted": "admin_action",
    },
    target_paths=("ObjectId",),
    org_paths=("OrganizationId",),
    metadata={
        "ip": ("ClientIP", "ActorIpAddress", "ClientIPAddress"),
        "user_agent": ("UserAgent",),
        "principal_id": ("UserKey",),
        "outcome": ("ResultStatus",),
        "reason": ("LogonError",),
        "error_code": ("ErrorNumber",),
        "workload": ("Workload",),
        "record_type": ("RecordType",),
        "user_type": ("UserType",),
        "app_id": ("ApplicationId", "AppId"),
        "site": ("SiteUrl",),
        "file": ("SourceFileName",),
        "team": ("TeamName",),
    },
    actor_rule="`UserId`. Required.",
    derived={
        "target_user": "the `Target` entry of type 5 (a user principal name) on directory records",
        "role": "the `Role.DisplayName` modified property's new value",
        "group": "the `Group.DisplayName` modified property's new value",
    },
)


def _target_user(record: dict[str, Any]) -> str:
    for target in objects(get(record, "Target")):
        if get(target, "Type") == 5:
            return text(target, "ID")
    return ""


def _modified(record: dict[str, Any], name: str) -> str:
    for change in objects(get(record, "ModifiedProperties")):
        if text(change, "Name") == name:
            return text(change, "NewValue").strip('"').strip()
    return ""


def _derive(record: dict[str, Any], kind: str) -> Derived:
    actor = text(record, "UserId")
    if not actor:
        raise AdapterError("UserId", "is required")
    return Derived(
        actor=actor,
        metadata={
            "target_user": _target_user(record),
            "role": _modified(record, "Role.DisplayName"),
            "group": _modified(record, "Group.DisplayName"),
        },
    )


def to_event(record: Any) -> dict[str, Any]:
    """One audit record (or an audit search item holding one in `AuditData`) as a harness event."""
    if isinstance(record, dict) and _WRAPPED in record:
        record = embedded_record(record, _WRAPPED)
    return map_record(TABLE, record, _derive)


def detect(document: Any) -> bool:
    """An audit record (`CreationTime`, `Operation`, `RecordType`, `Workload`) or a search item (`AuditData`
    with `CreationDate`)."""
    record = first_record(document)
    if not isinstance(record, dict):
        return False
    if isinstance(record.get(_WRAPPED), str) and "CreationDate" in record:
        return True
    return all(key in record for key in ("CreationTime", "Operation", "RecordType", "Workload"))


def records(document: Any) -> Iterator[tuple[str, Any]]:
    """A content blob (array) or search results (array), or one record."""
    yield from array_or_record(document)


FORMAT = Format("m365", "m365", detect, records, to_event, TABLE)
