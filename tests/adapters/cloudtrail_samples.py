"""CloudTrail records written from the published record and userIdentity schemas, each with the event it maps to."""

from __future__ import annotations

from typing import Any

ACCOUNT = "111122223333"
UA = "Mozilla/5.0 (X11; Linux x86_64) Firefox/126.0"
CLI = "aws-cli/2.15.30 Python/3.11.8 Linux/6.5 exe/x86_64.ubuntu.22"


def iam_user(name: str) -> dict[str, Any]:
    return {
        "type": "IAMUser",
        "principalId": f"AIDA{name.upper()}EXAMPLE",
        "arn": f"arn:aws:iam::{ACCOUNT}:user/{name}",
        "accountId": ACCOUNT,
        "accessKeyId": "AKIAIOSFODNN7EXAMPLE",
        "userName": name,
    }


def assumed(role: str, session: str) -> dict[str, Any]:
    return {
        "type": "AssumedRole",
        "principalId": f"AROA{role.upper()}:{session}",
        "arn": f"arn:aws:sts::{ACCOUNT}:assumed-role/{role}/{session}",
        "accountId": ACCOUNT,
        "accessKeyId": "ASIAIOSFODNN7EXAMPLE",
        "sessionContext": {
            "sessionIssuer": {
                "type": "Role",
                "principalId": f"AROA{role.upper()}",
                "arn": f"arn:aws:iam::{ACCOUNT}:role/{role}",
                "accountId": ACCOUNT,
                "userName": role,
            },
            "attributes": {"creationDate": "2026-04-10T08:00:00Z", "mfaAuthenticated": "true"},
        },
    }


def record(
    n: int,
    name: str,
    identity: dict[str, Any],
    *,
    source: str = "iam.amazonaws.com",
    kind: str = "AwsApiCall",
    ip: str = "203.0.113.10",
    agent: str = CLI,
    **extra: Any,
) -> dict[str, Any]:
    rec: dict[str, Any] = {
        "eventVersion": "1.09",
        "userIdentity": identity,
        "eventTime": f"2026-04-10T09:{n:02d}:00Z",
        "eventSource": source,
        "eventName": name,
        "awsRegion": "us-east-1",
        "sourceIPAddress": ip,
        "userAgent": agent,
        "requestParameters": None,
        "responseElements": None,
        "requestID": f"req-{n:04d}",
        "eventID": f"0c2f{n:04d}-1111-4222-8333-abcdefabcdef",
        "readOnly": False,
        "eventType": kind,
        "managementEvent": True,
        "recipientAccountId": ACCOUNT,
        "eventCategory": "Management",
    }
    rec.update(extra)
    return {key: value for key, value in rec.items() if value is not ...}


def event(
    n: int,
    kind: str,
    actor: str,
    action: str,
    target: str,
    metadata: dict[str, str],
    *,
    timestamp: str = "",
    event_id: str = "",
) -> dict[str, Any]:
    return {
        "id": event_id or f"cloudtrail-0c2f{n:04d}-1111-4222-8333-abcdefabcdef",
        "timestamp": timestamp or f"2026-04-10T09:{n:02d}:00Z",
        "source": "aws",
        "type": kind,
        "actor": actor,
        "org": ACCOUNT,
        "payload": {"action": action, "target": target, "metadata": metadata},
    }


def base(
    identity: dict[str, Any], source: str = "iam.amazonaws.com", ip: str = "203.0.113.10", agent: str = CLI
) -> dict[str, str]:
    out = {
        "ip": ip,
        "user_agent": agent,
        "aws_region": "us-east-1",
        "event_source": source,
        "identity_type": identity["type"],
    }
    if "principalId" in identity:
        out["principal_id"] = identity["principalId"]
    if "arn" in identity:
        out["caller"] = identity["arn"]
    if identity["type"] == "AssumedRole":
        session = identity["arn"].rsplit("/", 1)[1]
        role = identity["sessionContext"]["sessionIssuer"]["userName"]
        out.update(session_name=session, actor_role=role, role=role)
    if not agent:
        del out["user_agent"]
    return out


def granting(identity: dict[str, Any]) -> dict[str, str]:
    """base() of an event whose `role` is what it grants: without the caller's assumed role."""
    return {key: value for key, value in base(identity).items() if key != "role"}


ALICE, BOB, ADMIN = iam_user("alice"), iam_user("bob"), assumed("OrgAdmin", "carol@example.com")
DEPLOY = assumed("deploy-role", "i-0abc123def456")
ROOT = {
    "type": "Root",
    "principalId": ACCOUNT,
    "arn": f"arn:aws:iam::{ACCOUNT}:root",
    "accountId": ACCOUNT,
    "accessKeyId": "",
}
LAMBDA = {"type": "AWSService", "invokedBy": "lambda.amazonaws.com"}
SIGNIN = "signin.amazonaws.com"


def _cases() -> list[tuple[dict[str, Any], dict[str, Any]]]:
    c: list[tuple[dict[str, Any], dict[str, Any]]] = []

    def add(rec: dict[str, Any], ev: dict[str, Any]) -> None:
        c.append((rec, ev))

    add(
        record(
            1,
            "ConsoleLogin",
            ALICE,
            source=SIGNIN,
            kind="AwsConsoleSignIn",
            agent=UA,
            responseElements={"ConsoleLogin": "Success"},
            additionalEventData={"LoginTo": "https://console.aws.amazon.com/", "MobileVersion": "No", "MFAUsed": "Yes"},
        ),
        event(1, "login", "alice", "ConsoleLogin", "", {**base(ALICE, SIGNIN, agent=UA), "mfa_used": "Yes"}),
    )
    add(
        record(
            2,
            "ConsoleLogin",
            ALICE,
            source=SIGNIN,
            kind="AwsConsoleSignIn",
            agent=UA,
            ip="198.51.100.7",
            responseElements={"ConsoleLogin": "Failure"},
            errorMessage="Failed authentication",
            additionalEventData={"MFAUsed": "No"},
        ),
        event(
            2,
            "login_failure",
            "alice",
            "ConsoleLogin",
            "",
            {**base(ALICE, SIGNIN, ip="198.51.100.7", agent=UA), "mfa_used": "No"},
        ),
    )
    hidden = {"type": "IAMUser", "accountId": ACCOUNT, "accessKeyId": "", "userName": "HIDDEN_DUE_TO_SECURITY_REASONS"}
    add(
        record(
            3,
            "ConsoleLogin",
            hidden,
            source=SIGNIN,
            kind="AwsConsoleSignIn",
            agent=UA,
            responseElements={"ConsoleLogin": "Failure"},
            errorMessage="No username found in supplied account",
        ),
        event(3, "login_failure", "HIDDEN_DUE_TO_SECURITY_REASONS", "ConsoleLogin", "", base(hidden, SIGNIN, agent=UA)),
    )
    add(
        record(
            4,
            "ConsoleLogin",
            ROOT,
            source=SIGNIN,
            kind="AwsConsoleSignIn",
            agent=UA,
            responseElements={"ConsoleLogin": "Success"},
        ),
        event(4, "login", "root", "ConsoleLogin", "", base(ROOT, SIGNIN, agent=UA)),
    )
    add(
        record(
            5,
            "ConsoleLogin",
            ADMIN,
            source=SIGNIN,
            kind="AwsConsoleSignIn",
            agent=UA,
            responseElements={"ConsoleLogin": "Success"},
        ),
        event(5, "login", "carol@example.com", "ConsoleLogin", "", base(ADMIN, SIGNIN, agent=UA)),
    )
    add(
        record(
            6,
            "CreateUser",
            ADMIN,
            requestParameters={"userName": "dave"},
            responseElements={"user": {"userName": "dave", "userId": "AIDADAVE"}},
        ),
        event(6, "user_created", "carol@example.com", "CreateUser", "dave", {**base(ADMIN), "target_user": "dave"}),
    )
    add(
        record(7, "DeleteUser", ADMIN, requestParameters={"userName": "mallory"}),
        event(
            7, "user_deleted", "carol@example.com", "DeleteUser", "mallory", {**base(ADMIN), "target_user": "mallory"}
        ),
    )
    add(
        record(8, "AddUserToGroup", ALICE, requestParameters={"groupName": "Admins", "userName": "bob"}),
        event(
            8,
            "member_added",
            "alice",
            "AddUserToGroup",
            "bob",
            {**base(ALICE), "target_user": "bob", "group": "Admins", "role": "Admins"},
        ),
    )
    add(
        record(9, "RemoveUserFromGroup", ALICE, requestParameters={"groupName": "Admins", "userName": "bob"}),
        event(
            9,
            "member_removed",
            "alice",
            "RemoveUserFromGroup",
            "bob",
            {**base(ALICE), "target_user": "bob", "group": "Admins"},
        ),
    )
    admin_policy = "arn:aws:iam::aws:policy/AdministratorAccess"
    add(
        record(10, "AttachUserPolicy", ALICE, requestParameters={"userName": "bob", "policyArn": admin_policy}),
        event(
            10,
            "permission_change",
            "alice",
            "AttachUserPolicy",
            "bob",
            {**base(ALICE), "target_user": "bob", "role": "AdministratorAccess"},
        ),
    )
    add(
        record(
            11,
            "AttachRolePolicy",
            ADMIN,
            requestParameters={"roleName": "ci-role", "policyArn": "arn:aws:iam::aws:policy/PowerUserAccess"},
        ),
        event(
            11,
            "permission_change",
            "carol@example.com",
            "AttachRolePolicy",
            "ci-role",
            {**base(ADMIN), "role": "PowerUserAccess"},
        ),
    )
    add(
        record(12, "DetachUserPolicy", ALICE, requestParameters={"userName": "bob", "policyArn": admin_policy}),
        event(
            12,
            "role_removal",
            "alice",
            "DetachUserPolicy",
            "bob",
            {**base(ALICE), "target_user": "bob", "role": "AdministratorAccess"},
        ),
    )
    add(
        record(
            13,
            "PutUserPolicy",
            ALICE,
            requestParameters={"userName": "bob", "policyName": "inline-s3-write", "policyDocument": "{}"},
        ),
        event(
            13,
            "permission_change",
            "alice",
            "PutUserPolicy",
            "bob",
            {**base(ALICE), "target_user": "bob", "role": "inline-s3-write"},
        ),
    )
    add(
        record(14, "CreateRole", ADMIN, requestParameters={"roleName": "ci-role", "assumeRolePolicyDocument": "{}"}),
        # An IAM change names no role it grants: the caller's own role stays in actor_role only.
        event(14, "iam_change", "carol@example.com", "CreateRole", "ci-role", granting(ADMIN)),
    )
    add(
        record(15, "CreateAccessKey", BOB, requestParameters={"userName": "bob"}),
        event(15, "iam_change", "bob", "CreateAccessKey", "bob", {**base(BOB), "target_user": "bob"}),
    )
    add(
        record(16, "UpdateLoginProfile", ALICE, requestParameters={"userName": "bob", "passwordResetRequired": True}),
        event(16, "password_change", "alice", "UpdateLoginProfile", "bob", {**base(ALICE), "target_user": "bob"}),
    )
    add(
        record(17, "ChangePassword", BOB, agent=UA),
        event(17, "password_change", "bob", "ChangePassword", "", base(BOB, agent=UA)),
    )
    add(
        record(
            18,
            "EnableMFADevice",
            BOB,
            requestParameters={"userName": "bob", "serialNumber": f"arn:aws:iam::{ACCOUNT}:mfa/bob"},
        ),
        event(18, "mfa_change", "bob", "EnableMFADevice", "bob", {**base(BOB), "target_user": "bob"}),
    )
    add(
        record(19, "DeactivateMFADevice", ADMIN, requestParameters={"userName": "bob"}),
        event(
            19, "mfa_change", "carol@example.com", "DeactivateMFADevice", "bob", {**base(ADMIN), "target_user": "bob"}
        ),
    )
    sts = "sts.amazonaws.com"
    role_arn = f"arn:aws:iam::{ACCOUNT}:role/OrgAdmin"
    add(
        record(
            20,
            "AssumeRole",
            ALICE,
            source=sts,
            requestParameters={"roleArn": role_arn, "roleSessionName": "alice-admin"},
        ),
        event(20, "assume_role", "alice", "AssumeRole", role_arn, {**base(ALICE, sts), "role": "OrgAdmin"}),
    )
    deploy_arn = f"arn:aws:iam::{ACCOUNT}:role/deploy-role"
    add(
        record(
            21,
            "AssumeRole",
            LAMBDA,
            source=sts,
            ip="lambda.amazonaws.com",
            agent="lambda.amazonaws.com",
            requestParameters={"roleArn": deploy_arn, "roleSessionName": "fn-deploy"},
        ),
        event(
            21,
            "assume_role",
            "lambda.amazonaws.com",
            "AssumeRole",
            deploy_arn,
            {**base(LAMBDA, sts, ip="lambda.amazonaws.com", agent="lambda.amazonaws.com"), "role": "deploy-role"},
        ),
    )
    saml = {
        "type": "SAMLUser",
        "principalId": "SAMPLE:erin@example.com",
        "userName": "erin@example.com",
        "identityProvider": "bdGOnTesti4nD4WsmKjEiLa3JeU=",
    }
    sso_arn = f"arn:aws:iam::{ACCOUNT}:role/SSOReadOnly"
    add(
        record(
            22,
            "AssumeRoleWithSAML",
            saml,
            source=sts,
            requestParameters={"roleArn": sso_arn, "principalArn": f"arn:aws:iam::{ACCOUNT}:saml-provider/Okta"},
        ),
        event(
            22,
            "assume_role",
            "erin@example.com",
            "AssumeRoleWithSAML",
            sso_arn,
            {**base(saml, sts), "role": "SSOReadOnly"},
        ),
    )
    s3 = "s3.amazonaws.com"
    add(
        record(
            23,
            "GetObject",
            DEPLOY,
            source=s3,
            requestParameters={"bucketName": "payments-artifacts", "key": "build/app.tar.gz"},
        ),
        event(23, "api_call", "i-0abc123def456", "GetObject", "payments-artifacts", base(DEPLOY, s3)),
    )
    ec2 = "ec2.amazonaws.com"
    add(
        record(
            24,
            "DescribeInstances",
            BOB,
            source=ec2,
            errorCode="Client.UnauthorizedOperation",
            errorMessage="You are not authorized to perform this operation.",
        ),
        event(
            24,
            "api_call",
            "bob",
            "DescribeInstances",
            "",
            {**base(BOB, ec2), "error_code": "Client.UnauthorizedOperation"},
        ),
    )
    add(
        record(25, "RunInstances", DEPLOY, source=ec2, agent=..., requestParameters={"instanceType": "t3.micro"}),
        event(25, "api_call", "i-0abc123def456", "RunInstances", "", base(DEPLOY, ec2, agent="")),
    )
    trail = "cloudtrail.amazonaws.com"
    add(
        record(
            26,
            "StopLogging",
            ADMIN,
            source=trail,
            requestParameters={"name": f"arn:aws:cloudtrail:us-east-1:{ACCOUNT}:trail/org-trail"},
        ),
        event(
            26,
            "config_change",
            "carol@example.com",
            "StopLogging",
            f"arn:aws:cloudtrail:us-east-1:{ACCOUNT}:trail/org-trail",
            base(ADMIN, trail),
        ),
    )
    add(
        record(
            27,
            "PutBucketPolicy",
            ALICE,
            source=s3,
            requestParameters={"bucketName": "payments-artifacts", "bucketPolicy": {"Version": "2012-10-17"}},
        ),
        event(27, "config_change", "alice", "PutBucketPolicy", "payments-artifacts", base(ALICE, s3)),
    )
    add(
        record(
            28,
            "AuthorizeSecurityGroupIngress",
            DEPLOY,
            source=ec2,
            requestParameters={"groupId": "sg-0123456789abcdef0", "ipPermissions": {"items": []}},
        ),
        event(
            28,
            "config_change",
            "i-0abc123def456",
            "AuthorizeSecurityGroupIngress",
            "sg-0123456789abcdef0",
            base(DEPLOY, ec2),
        ),
    )
    internal = {"accountId": ACCOUNT, "invokedBy": "AWS Internal"}
    add(
        record(29, "CreateSnapshot", internal, source=ec2, kind="AwsServiceEvent", ip=..., agent=...),
        event(29, "other", "AWS Internal", "CreateSnapshot", "", {"aws_region": "us-east-1", "event_source": ec2}),
    )
    federated = {
        "type": "FederatedUser",
        "principalId": f"{ACCOUNT}:frank",
        "arn": f"arn:aws:sts::{ACCOUNT}:federated-user/frank",
        "accountId": ACCOUNT,
        "sessionContext": {"sessionIssuer": {"type": "IAMUser", "userName": "broker"}},
    }
    add(
        record(30, "GetCallerIdentity", federated, source=sts),
        event(30, "api_call", "frank", "GetCallerIdentity", "", base(federated, sts)),
    )
    no_id = record(31, "ListUsers", BOB)
    del no_id["eventID"]
    add(no_id, event(31, "api_call", "bob", "ListUsers", "", base(BOB), event_id="cloudtrail-sha256-"))
    add(
        record(
            32,
            "CreateServiceLinkedRole",
            {"type": "AWSService", "invokedBy": "autoscaling.amazonaws.com"},
            ip="autoscaling.amazonaws.com",
            agent="autoscaling.amazonaws.com",
            requestParameters={"aWSServiceName": "autoscaling.amazonaws.com"},
        ),
        event(
            32,
            "service_principal_created",
            "autoscaling.amazonaws.com",
            "CreateServiceLinkedRole",
            "",
            {
                "ip": "autoscaling.amazonaws.com",
                "user_agent": "autoscaling.amazonaws.com",
                "aws_region": "us-east-1",
                "event_source": "iam.amazonaws.com",
                "identity_type": "AWSService",
            },
        ),
    )
    center = {
        "type": "IdentityCenterUser",
        "accountId": ACCOUNT,
        "onBehalfOf": {"userId": "grace@example.com", "identityStoreArn": "arn:aws:identitystore::1:identitystore/d-1"},
        "credentialId": "EXAMPLEVHULjJdTUdPJfofVa1sufHDoj7aYcOYcxFVllWR_Whr1fEXAMPLE",
    }
    add(
        record(33, "ListAccounts", center, source="sso.amazonaws.com"),
        event(33, "api_call", "grace@example.com", "ListAccounts", "", base(center, "sso.amazonaws.com")),
    )
    add(
        record(
            34,
            "CheckMfa",
            ALICE,
            source=SIGNIN,
            kind="AwsConsoleSignIn",
            agent=UA,
            eventTime="2026-04-10T11:34:00.250+02:00",
            responseElements={"CheckMfa": "Success"},
        ),
        event(34, "login", "alice", "CheckMfa", "", base(ALICE, SIGNIN, agent=UA), timestamp="2026-04-10T09:34:00.25Z"),
    )
    return c


CASES = _cases()
