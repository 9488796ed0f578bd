"""Slack Audit Logs API entries (`GET /audit/v1/logs`: `{"entries": [...], "response_metadata": ...}` per page,
an array of entries, or one entry per line).

Actor: `actor.user.email`, else `actor.user.name`, else `actor.user.id`; every entry has an actor, so none
is an error. Time: `date_create`, epoch seconds. Target: the entity the action was on (a user's email,
name or id, else the channel, file, app, workflow, workspace or enterprise name). Org: the location the action
happened in (`context.location.domain`, else its id). A `role_change_to_<role>` action names the role.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from harness.adapters.fields import AdapterError, text
from harness.adapters.table import Derived, Format, Table, array_or_record, first_record, listed, map_record

_ROLE_PREFIX = "role_change_to_"

TABLE = Table(
    format="slack-audit",
    source="slack",
    id_path="id",
    time_paths=("date_create",),
    action_path="action",
    types={
        "user_login": "login",
        "user_login_failed": "login_failure",
        "user_created": "user_created",
        "guest_created": "user_created",
        "user_deactivated": "user_disabled",
        "guest_deactivated": "user_disabled",
        "user_reactivated": "user_enabled",
        "guest_reactivated": "user_enabled",
        "user_channel_join": "member_added",
        "user_channel_leave": "member_removed",
        "user_added_to_usergroup": "member_added",
        "user_removed_from_usergroup": "member_removed",
        "user_added_to_workspace": "member_added",
        "user_removed_from_workspace": "member_removed",
        "role_change_to_admin": "role_assignment",
        "role_change_to_owner": "role_assignment",
        "role_change_to_user": "role_removal",
        "role_change_to_guest": "role_removal",
        "user_email_updated": "iam_change",
        "user_session_invalidated": "iam_change",
        "user_session_reset_by_admin": "iam_change",
        "app_installed": "service_principal_created",
        "app_approved": "service_principal_created",
        "app_scopes_expanded": "permission_change",
        "app_token_preserved": "iam_change",
        "bot_token_upgraded": "iam_change",
        "pref.sso_setting_changed": "config_change",
        "pref.two_factor_auth_changed": "mfa_change",
        "pref.public_channel_retention_changed": "config_change",
        "public_channel_created": "config_change",
        "private_channel_created": "config_change",
        "channel_moved": "config_change",
        "file_public_link_created": "config_change",
        "file_downloaded": "api_call",
        "anomaly": "admin_action",
    },
    target_paths=(
        "entity.user.email",
        "entity.user.name",
        "entity.user.id",
        "entity.channel.name",
        "entity.file.name",
        "entity.app.name",
        "entity.workflow.name",
        "entity.usergroup.name",
        "entity.workspace.name",
        "entity.enterprise.name",
    ),
    org_paths=("context.location.domain", "context.location.id"),
    metadata={
        "ip": ("context.ip_address",),
        "user_agent": ("context.ua",),
        "session_id": ("context.session_id",),
        "principal_id": ("actor.user.id",),
        "actor_type": ("actor.type",),
        "display_name": ("actor.user.name",),
        "entity_type": ("entity.type",),
        "target_user": ("entity.user.email", "entity.user.name", "entity.user.id"),
        "channel": ("entity.channel.name",),
        "app": ("entity.app.name",),
        "workspace": ("context.location.name",),
    },
    actor_rule="`actor.user.email`, else `actor.user.name`, else `actor.user.id`. Required.",
    derived={"role": "the role a `role_change_to_<role>` action names"},
)


def _derive(record: dict[str, Any], kind: str) -> Derived:
    actor = text(record, "actor.user.email", "actor.user.name", "actor.user.id")
    if not actor:
        raise AdapterError("actor.user", "is required (no email, name or id)")
    action = text(record, "action")
    role = action[len(_ROLE_PREFIX) :] if action.startswith(_ROLE_PREFIX) else ""
    return Derived(actor=actor, metadata={"role": role})


def to_event(record: Any) -> dict[str, Any]:
    """One audit-log entry as a harness event."""
    return map_record(TABLE, record, _derive)


def _is_entry(record: Any) -> bool:
    return (
        isinstance(record, dict)
        and all(key in record for key in ("date_create", "action", "entity"))
        and isinstance(record.get("actor"), dict)
    )


def detect(document: Any) -> bool:
    """An entry (`date_create`, `action`, `entity` and an `actor` object), or a page of them (`entries`)."""
    if isinstance(document, dict) and isinstance(document.get("entries"), list):
        return not document["entries"] or _is_entry(document["entries"][0])
    return _is_entry(first_record(document))


def records(document: Any) -> Iterator[tuple[str, Any]]:
    """An API page (`entries`), an array of entries, or one entry."""
    if isinstance(document, dict) and "entries" in document:
        yield from listed(document, "entries")
    else:
        yield from array_or_record(document)


FORMAT = Format("slack-audit", "slack", detect, records, to_event, TABLE)
