"""Okta System Log API records (`GET /api/v1/logs`: a JSON array per page, or one record per line).

Actor: `actor.alternateId` (the login, or `system@okta.com` for Okta itself), else its display name, else its
id (targets likewise; Okta's placeholder alternateId "unknown" counts as none). Every System Log record has
an actor, so none is an error. A refused or denied sign-in (`outcome.result` FAILURE or DENY) is
`login_failure`. `location` is the alpha-2 code of
`client.geographicalContext.country` (omitted when the country is not one ISO knows).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from harness.adapters.fields import AdapterError, get, objects, text
from harness.adapters.table import Derived, Format, Table, array_or_record, first_record, map_record
from harness.text.geo import country_code

_SIGN_INS = {"login"}
_FAILED = {"FAILURE", "DENY"}

TABLE = Table(
    format="okta",
    source="okta",
    id_path="uuid",
    time_paths=("published",),
    action_path="eventType",
    types={
        "user.session.start": "login",
        "user.authentication.sso": "login",
        "user.authentication.auth_via_mfa": "login",
        "user.authentication.verify": "login",
        "user.authentication.authenticate": "login",
        "user.authentication.auth_via_radius": "login",
        "user.authentication.auth_via_IDP": "login",
        "user.mfa.factor.activate": "mfa_change",
        "user.mfa.factor.deactivate": "mfa_change",
        "user.mfa.factor.reset_all": "mfa_change",
        "user.mfa.factor.update": "mfa_change",
        "user.account.update_password": "password_change",
        "user.account.reset_password": "password_change",
        "user.credential.forgot_password": "password_change",
        "user.lifecycle.create": "user_created",
        "user.lifecycle.delete.initiated": "user_deleted",
        "user.lifecycle.delete.completed": "user_deleted",
        "user.lifecycle.deactivate": "user_disabled",
        "user.lifecycle.suspend": "user_disabled",
        "user.account.lock": "user_disabled",
        "user.lifecycle.activate": "user_enabled",
        "user.lifecycle.reactivate": "user_enabled",
        "user.lifecycle.unsuspend": "user_enabled",
        "user.account.unlock": "user_enabled",
        "group.user_membership.add": "member_added",
        "group.user_membership.remove": "member_removed",
        "application.user_membership.add": "member_added",
        "application.user_membership.remove": "member_removed",
        "user.account.privilege.grant": "role_assignment",
        "group.privilege.grant": "role_assignment",
        "user.account.privilege.revoke": "role_removal",
        "group.privilege.revoke": "role_removal",
        "system.api_token.create": "iam_change",
        "system.api_token.revoke": "iam_change",
        "application.lifecycle.create": "service_principal_created",
        "app.oauth2.client.lifecycle.create": "service_principal_created",
        "policy.lifecycle.create": "config_change",
        "policy.lifecycle.update": "config_change",
        "policy.lifecycle.delete": "config_change",
        "policy.rule.update": "config_change",
        "policy.rule.delete": "config_change",
        "zone.update": "config_change",
        "zone.delete": "config_change",
        "system.org.rate_limit.violation": "admin_action",
        "user.session.impersonation.initiate": "admin_action",
    },
    metadata={
        "ip": ("client.ipAddress", "request.ipChain.0.ip"),
        "user_agent": ("client.userAgent.rawUserAgent",),
        "principal_id": ("actor.id",),
        "actor_type": ("actor.type",),
        "display_name": ("actor.displayName",),
        "outcome": ("outcome.result",),
        "reason": ("outcome.reason",),
        "severity": ("severity",),
        "session_id": ("authenticationContext.externalSessionId",),
        "city": ("client.geographicalContext.city",),
        "message": ("displayMessage",),
        "transaction_id": ("transaction.id",),
    },
    actor_rule=(
        "`actor.alternateId`, else `actor.displayName`, else `actor.id` (Okta's `unknown` counts as none). Required."
    ),
    derived={
        "target": "the first `target` entry (alternateId, else displayName, else id)",
        "location": "ISO 3166 alpha-2 code of `client.geographicalContext.country` (omitted when unknown)",
        "target_user": "the first `target` of type User",
        "group": "the first `target` of type UserGroup",
        "app": "the first `target` of type AppInstance",
        "role": "the first `target` of type Role, else `debugContext.debugData.privilegeGranted`",
        "type": "`login_failure` when a sign-in's `outcome.result` is FAILURE or DENY",
    },
)


def _targets(record: dict[str, Any]) -> list[dict[str, Any]]:
    return objects(get(record, "target"))


def _name(entity: Any) -> str:
    """alternateId, else displayName, else id; Okta writes the alternateId "unknown" when there is none."""
    alternate = text(entity, "alternateId")
    return alternate if alternate and alternate != "unknown" else text(entity, "displayName", "id")


def _target_of(targets: list[dict[str, Any]], *kinds: str) -> str:
    for target in targets:
        if text(target, "type").lower() in kinds:
            return _name(target)
    return ""


def _derive(record: dict[str, Any], kind: str) -> Derived:
    actor = _name(get(record, "actor"))
    if not actor:
        raise AdapterError("actor.alternateId", "is required (no alternateId, displayName or id)")
    targets = _targets(record)
    first = _name(targets[0]) if targets else ""
    failed = kind in _SIGN_INS and text(record, "outcome.result").upper() in _FAILED
    role = _target_of(targets, "role") or text(record, "debugContext.debugData.privilegeGranted")
    return Derived(
        actor=actor,
        metadata={
            "location": country_code(text(record, "client.geographicalContext.country")),
            "target_user": _target_of(targets, "user"),
            "group": _target_of(targets, "usergroup", "group"),
            "app": _target_of(targets, "appinstance"),
            "role": role,
        },
        type="login_failure" if failed else "",
        target=first,
    )


def to_event(record: Any) -> dict[str, Any]:
    """One System Log record as a harness event."""
    return map_record(TABLE, record, _derive)


def detect(document: Any) -> bool:
    """A System Log record: `published`, `eventType`, and an `actor` object."""
    record = first_record(document)
    return (
        isinstance(record, dict)
        and all(key in record for key in ("published", "eventType"))
        and isinstance(record.get("actor"), dict)
    )


def records(document: Any) -> Iterator[tuple[str, Any]]:
    """A page (array) of records, or one record."""
    yield from array_or_record(document)


FORMAT = Format("okta", "okta", detect, records, to_event, TABLE)
