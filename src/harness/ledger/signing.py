"""Ed25519 signatures over heads documents, so an auditor holding only the public key can trust a heads file.

The signature covers the canonical JSON of the document without its `signature` member, and the member names
the algorithm and the key (SHA-256 of the raw public key), so the file says what it is (docs/decisions.md).
"""

from __future__ import annotations

import base64
import hashlib
from pathlib import Path
from typing import Any

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from harness import files
from harness.errors import InvalidInput
from harness.text import canonjson
from harness.text.sanitize import echo

SIGNATURE_ALG = "Ed25519"
KEY_FILE_MAX_BYTES = 16 * 1024


class SignatureError(ValueError):
    """A heads document that is unsigned, signed by another key, or altered after signing."""


def key_id(public_key: Ed25519PublicKey) -> str:
    """The SHA-256 of the raw 32-byte public key, hex: names the key in a signed document."""
    raw = public_key.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    return hashlib.sha256(raw).hexdigest()


def new_key_pair() -> tuple[bytes, bytes, str]:
    """A fresh key pair as (private PKCS#8 PEM, public SubjectPublicKeyInfo PEM, key id)."""
    private = Ed25519PrivateKey.generate()
    private_pem = private.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
    public = private.public_key()
    public_pem = public.public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
    return private_pem, public_pem, key_id(public)


def _read_key_file(field: str, path: Path, *, private: bool) -> bytes:
    try:
        with files.open_regular(path, cap=KEY_FILE_MAX_BYTES) as (fd, info):
            if private and info.st_mode & 0o077:
                mode = f"{info.st_mode & 0o777:o}"
                raise InvalidInput(f"{field}: {echo(str(path))} is readable by others (mode {mode}); chmod 600")
            return files.read_capped(fd, path, KEY_FILE_MAX_BYTES)
    except files.FileRefused as exc:
        raise InvalidInput(f"{field}: {exc}") from None


def load_private_key(path: Path) -> Ed25519PrivateKey:
    """The Ed25519 private key of a `ledger keygen` file; refuses a file others can read, or another key type."""
    data = _read_key_file("sign", path, private=True)
    try:
        key = serialization.load_pem_private_key(data, password=None)
    except (ValueError, TypeError):
        raise InvalidInput(f"sign: {echo(str(path))} is not an unencrypted PEM private key") from None
    if not isinstance(key, Ed25519PrivateKey):
        raise InvalidInput(f"sign: {echo(str(path))} is not an Ed25519 key")
    return key


def load_public_key(path: Path) -> Ed25519PublicKey:
    """The Ed25519 public key of a `ledger keygen` .pub file."""
    data = _read_key_file("pubkey", path, private=False)
    try:
        key = serialization.load_pem_public_key(data)
    except (ValueError, TypeError):
        raise InvalidInput(f"pubkey: {echo(str(path))} is not a PEM public key") from None
    if not isinstance(key, Ed25519PublicKey):
        raise InvalidInput(f"pubkey: {echo(str(path))} is not an Ed25519 key")
    return key


def _signed_bytes(document: dict[str, Any]) -> bytes:
    return canonjson.dumps_bytes({k: v for k, v in document.items() if k != "signature"})


def sign_document(document: dict[str, Any], private_key: Ed25519PrivateKey) -> dict[str, Any]:
    """The document with a `signature` member over the canonical JSON of everything else."""
    value = private_key.sign(_signed_bytes(document))
    signature = {
        "alg": SIGNATURE_ALG,
        "key_id": key_id(private_key.public_key()),
        "value": base64.b64encode(value).decode("ascii"),
    }
    return {**document, "signature": signature}


def check_signature(document: Any, public_key: Ed25519PublicKey) -> None:
    """Raise SignatureError unless `document` carries a valid Ed25519 signature by `public_key`."""
    signature = document.get("signature") if isinstance(document, dict) else None
    if not isinstance(signature, dict) or set(signature) != {"alg", "key_id", "value"}:
        raise SignatureError('the heads document is not signed (expected a "signature" with alg, key_id, value)')
    if signature["alg"] != SIGNATURE_ALG:
        raise SignatureError(f"signature.alg: expected {SIGNATURE_ALG}, got {echo(str(signature['alg']))}")
    if signature["key_id"] != key_id(public_key):
        raise SignatureError("signature.key_id: the document was signed by another key than --pubkey")
    try:
        value = base64.b64decode(str(signature["value"]), validate=True)
    except ValueError:
        raise SignatureError("signature.value: not base64") from None
    try:
        public_key.verify(value, _signed_bytes(document))
    except InvalidSignature:
        raise SignatureError("the signature does not match: the heads document was altered after signing") from None
