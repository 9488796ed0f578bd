"""A benign corpus (issue 8 item 4): identifiers an investigator needs, which the redactor must leave alone.

Real-shaped CloudTrail, Okta and GitHub audit records (the adapter samples, plus records written here
around ARNs, request ids and digests) and AUR PKGBUILD text. An AWS access key id is credential
material (the aws_access_key_id rule redacts it, as gitleaks does), so the adapter samples lose that
one field here: a record carrying one is a record with a planted secret, not a benign one.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.adapters import cloudtrail_samples, github_samples, okta_samples

SAMPLES = Path(__file__).resolve().parents[2] / "src" / "harness" / "samples"
ACCOUNT = "123456789012"
REQUEST_ID = "4f2c8a1e-9b7d-4c3e-8f1a-2b6d9e0c7a55"
SECRET_ARN = f"arn:aws:secretsmanager:us-east-1:{ACCOUNT}:secret:prod/db-AbCdEf"
KMS_ARN = f"arn:aws:kms:us-east-1:{ACCOUNT}:key/1234abcd-12ab-34cd-56ef-1234567890ab"
COMMIT = "3b18e512dba79e4c8300dd08aeb37f8e728b8dad"
SHA256 = "9f86d081884c7d659a2feaea0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a0"

CLOUDTRAIL_RECORDS: list[dict[str, Any]] = [
    {
        "eventVersion": "1.09",
        "eventSource": "secretsmanager.amazonaws.com",
        "eventName": "GetSecretValue",
        "awsRegion": "us-east-1",
        "userIdentity": {"type": "AssumedRole", "arn": f"arn:aws:sts::{ACCOUNT}:assumed-role/app-role/i-0abc123def456"},
        "requestParameters": {"secretId": SECRET_ARN, "versionStage": "AWSCURRENT"},
        "responseElements": None,
        "requestID": REQUEST_ID,
        "eventID": "a1b2c3d4-5678-90ab-cdef-1234567890ab",
        "resources": [{"ARN": SECRET_ARN, "accountId": ACCOUNT, "type": "AWS::SecretsManager::Secret"}],
    },
    {
        "eventSource": "kms.amazonaws.com",
        "eventName": "Decrypt",
        "requestParameters": {"keyId": KMS_ARN, "encryptionAlgorithm": "SYMMETRIC_DEFAULT"},
        "requestID": "7e1d2c3b-4a59-4687-9f0e-1a2b3c4d5e6f",
        "resources": [{"ARN": KMS_ARN, "type": "AWS::KMS::Key"}],
    },
    {
        "eventSource": "ssm.amazonaws.com",
        "eventName": "GetParameter",
        "requestParameters": {"name": "/prod/db/password", "withDecryption": True},
        "resources": [{"ARN": f"arn:aws:ssm:eu-west-1:{ACCOUNT}:parameter/app/token-rotation/schedule"}],
    },
    {
        "eventSource": "iam.amazonaws.com",
        "eventName": "AttachRolePolicy",
        "requestParameters": {
            "roleName": "password-reset-lambda",
            "policyArn": f"arn:aws:iam::{ACCOUNT}:policy/SecretsReadOnly",
        },
        "responseElements": None,
    },
]

OKTA_RECORDS: list[dict[str, Any]] = [
    {
        "uuid": "dc9fd3c0-598c-11ef-8478-2b7584bf8d5a",
        "eventType": "user.account.update_password",
        "authenticationContext": {"externalSessionId": "102abcdEfGhIjKlMnOpQrStUv"},
        "debugContext": {"debugData": {"requestId": "ZmN3ZWY0YzEyMzQ1Njc4OTA", "requestUri": "/api/v1/authn"}},
        "target": [{"id": "00u1jane00000000000", "type": "User", "passwordChanged": "2026-04-10T09:00:00Z"}],
    },
]

GITHUB_RECORDS: list[dict[str, Any]] = [
    {"action": "personal_access_token.request_created", "token_id": 12345, "token_scopes": "repo,read:org"},
    {"action": "oauth_access.create", "oauth_application_id": 42, "token_last_eight": "a1b2c3d4"},
    {"action": "git.push", "repo": "octo/hello", "after": COMMIT, "_document_id": "kP3nQ8xZ1mT5vW2yB7cD9f"},
]

TEXT_LINES = [
    "pkgname=example-tool",
    f"_commit={COMMIT}",
    f'source=("git+https://github.com/example/tool.git#commit={COMMIT}")',
    f"sha256sums=('{SHA256}')",
    "b2sums=('SKIP')",
    "https://api.github.com/repos/octo/hello/commits?per_page=100&page=2",
    "https://example.com/callback?state=af0ifjsldkj&client_id=s6BhdRkqt3",
    "token_endpoint: https://login.example.com/oauth2/v1/token",
    f"secret_arn = \"{SECRET_ARN}\"",
    f"arn:aws:lambda:us-east-1:{ACCOUNT}:function:rotate-secret:3",
    "arn:aws:s3:::my-bucket/private/keys.txt",
]


def _without_access_key_ids(node: Any) -> Any:
    if isinstance(node, dict):
        return {key: _without_access_key_ids(value) for key, value in node.items() if key != "accessKeyId"}
    if isinstance(node, list):
        return [_without_access_key_ids(value) for value in node]
    return node


def lines() -> list[str]:
    """Every line of the benign corpus."""
    out = [json.dumps(record) for record in CLOUDTRAIL_RECORDS + OKTA_RECORDS + GITHUB_RECORDS]
    for module in (cloudtrail_samples, okta_samples, github_samples):
        for record, event in module.CASES:
            out += [json.dumps(_without_access_key_ids(record)), json.dumps(_without_access_key_ids(event))]
    for sample in sorted(SAMPLES.iterdir()):
        out += sample.read_text(encoding="utf-8").splitlines()
    return out + TEXT_LINES
