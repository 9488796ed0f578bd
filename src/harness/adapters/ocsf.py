"""OCSF 1.x events (an array, or one event per line), whatever product wrote them.

Authentication (3002), Account Change (3001), User Access Management (3005), Group Management (3006) and
API Activity (6003) are mapped by `type_uid` (class_uid * 100 + activity_id); an unlisted activity of those
classes by `class_uid`; any other class is `other`, with its `type_uid` as the action and its class and type
names in metadata. Time: `time`, epoch milliseconds. Actor: for Authentication the `user` signing in,
else `actor.user` (email, else name, else uid); OCSF makes the actor optional, so it may be empty. Source:
`metadata.product.vendor_name` (and the product name for Google and Microsoft) mapped onto the harness's
sources where one fits, else `ocsf` (the id prefix is always `ocsf-`).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from harness.adapters.fields import text
from harness.adapters.table import Derived, Format, Table, array_or_record, first_record, map_record
from harness.text.geo import country_code

AUTHENTICATION = "3002"
_FAILURE = "2"
_USER = ("user.email_addr", "user.name", "user.uid")
_ACTOR = ("actor.user.email_addr", "actor.user.name", "actor.user.uid")
_SIGN_IN_TARGET = ("service.name", "dst_endpoint.svc_name", "dst_endpoint.hostname")
_TARGET = (*_USER, "group.name", "resources.0.name", "resources.0.uid", "dst_endpoint.hostname")
# vendor_name (casefolded) -> source; None means the product name decides (see _PRODUCTS).
_VENDORS: dict[str, str | None] = {
    "aws": "aws",
    "amazon web services": "aws",
    "amazon": "aws",
    "okta": "okta",
    "github": "github",
    "slack": "slack",
    "google": None,
    "microsoft": None,
}
_PRODUCTS = (
    ("workspace", "google-workspace"),
    ("cloud", "gcp"),
    ("365", "m365"),
    ("office", "m365"),
    ("entra", "azure"),
    ("azure", "azure"),
)

TABLE = Table(
    format="ocsf",
    source="ocsf",
    id_path="metadata.uid",
    time_paths=("time",),
    action_path="type_uid",
    types={
        "300201": "login",
        "300101": "user_created",
        "300102": "user_enabled",
        "300103": "password_change",
        "300104": "password_change",
        "300105": "user_disabled",
        "300106": "user_deleted",
        "300107": "permission_change",
        "300108": "permission_change",
        "300109": "user_disabled",
        "300110": "mfa_change",
        "300111": "mfa_change",
        "300112": "user_enabled",
        "300501": "role_assignment",
        "300502": "role_removal",
        "300601": "role_assignment",
        "300602": "role_removal",
        "300603": "member_added",
        "300604": "member_removed",
        "300605": "config_change",
        "300606": "config_change",
        "600301": "api_call",
        "600302": "api_call",
        "600303": "api_call",
        "600304": "api_call",
    },
    fallback_path="class_uid",
    fallback_types={"3001": "iam_change", "3005": "permission_change", "3006": "admin_action", "6003": "api_call"},
    org_paths=("cloud.account.uid", "metadata.tenant_uid"),
    metadata={
        "ip": ("src_endpoint.ip",),
        "user_agent": ("http_request.user_agent",),
        "principal_id": ("actor.user.uid",),
        "session_id": ("actor.session.uid", "session.uid"),
        "group": ("group.name",),
        "role": ("privileges.0",),
        "outcome": ("status",),
        "reason": ("status_detail",),
        "class": ("class_name",),
        "type_name": ("type_name",),
        "operation": ("api.operation",),
        "service": ("api.service.name", "service.name"),
        "product": ("metadata.product.name",),
        "vendor": ("metadata.product.vendor_name",),
        "cloud_region": ("cloud.region",),
        "message": ("message",),
    },
    actor_rule=(
        "for Authentication (3002) `user.email_addr`, else `user.name`, else `user.uid`; otherwise (and when "
        "those are empty) `actor.user.email_addr`, else `actor.user.name`, else `actor.user.uid`; may be empty."
    ),
    derived={
        "target": (
            "for Authentication, `service.name`, else `dst_endpoint.svc_name`, else `dst_endpoint.hostname`; "
            "otherwise the first of `user.email_addr`, `user.name`, `user.uid`, `group.name`, `resources.0.name`, "
            "`resources.0.uid`, `dst_endpoint.hostname`"
        ),
        "location": "ISO 3166 alpha-2 code of `src_endpoint.location.country` (omitted when unknown)",
        "target_user": "the `user` acted on (not for Authentication, where `user` is the actor)",
        "type": "`login_failure` when an Authentication logon has `status_id` 2 (Failure)",
        "source": "`metadata.product.vendor_name` (with the product name for Google and Microsoft) mapped onto "
        "aws, okta, github, slack, google-workspace, gcp, m365 or azure, else `ocsf`",
    },
)


def _source(record: dict[str, Any]) -> str:
    vendor = text(record, "metadata.product.vendor_name").casefold()
    if vendor not in _VENDORS:
        return ""
    known = _VENDORS[vendor]
    if known:
        return known
    product = text(record, "metadata.product.name").casefold()
    return next((source for word, source in _PRODUCTS if word in product), "")


def _derive(record: dict[str, Any], kind: str) -> Derived:
    signing_in = text(record, "class_uid") == AUTHENTICATION
    actor = text(record, *_USER, *_ACTOR) if signing_in else text(record, *_ACTOR)
    failed = kind == "login" and text(record, "status_id") == _FAILURE
    target = text(record, *(_SIGN_IN_TARGET if signing_in else _TARGET))
    return Derived(
        actor=actor,
        metadata={
            "location": country_code(text(record, "src_endpoint.location.country")),
            "target_user": "" if signing_in else text(record, *_USER),
        },
        type="login_failure" if failed else "",
        target=target,
        source=_source(record),
    )


def to_event(record: Any) -> dict[str, Any]:
    """One OCSF event as a harness event."""
    return map_record(TABLE, record, _derive)


def detect(document: Any) -> bool:
    """An OCSF event: an integer `class_uid`, `time`, and a `metadata` object with `version` or `product`."""
    record = first_record(document)
    if not isinstance(record, dict):
        return False
    metadata = record.get("metadata")
    class_uid = record.get("class_uid")
    return (
        isinstance(class_uid, int)
        and not isinstance(class_uid, bool)
        and "time" in record
        and isinstance(metadata, dict)
        and any(key in metadata for key in ("version", "product"))
    )


def records(document: Any) -> Iterator[tuple[str, Any]]:
    """An array of events, or one event."""
    yield from array_or_record(document)


FORMAT = Format("ocsf", "ocsf", detect, records, to_event, TABLE)
