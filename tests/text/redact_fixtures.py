"""Seeded rule fixtures (docs/ledger.md §6.7): a fixed prefix plus a random body over the rule's alphabet.

No realistic secret literal is committed: every secret is assembled at test time. Each fixture gives
positives in at least three syntaxes, the truncation base, and near-miss negatives. A positive names a
different `winner` only where the merge rules (docs/ledger.md §6.3) let a broader rule of the same class with a lower
number win a span of equal length; the rule itself must still find the value on its own.
"""

from __future__ import annotations

import base64
import random
import string
from collections.abc import Callable
from dataclasses import dataclass

ALNUM = string.ascii_letters + string.digits
UPPER_DIGITS = string.ascii_uppercase + string.digits
HEX = "0123456789abcdef"
B64 = ALNUM + "+/"
B64URL = ALNUM + "_-"
BECH32 = "QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L"


def rand(rng: random.Random, alphabet: str, size: int) -> str:
    """A seeded random body."""
    return "".join(rng.choice(alphabet) for _ in range(size))


@dataclass(frozen=True)
class Positive:
    """A syntax with `{s}` where the secret goes; `winner` as explained in the module docstring."""

    template: str
    winner: str | None = None
    kept: str | None = None

    @property
    def prefix(self) -> str:
        """The text that must survive in front of the placeholder (default: all text before the secret)."""
        return self.split()[0] if self.kept is None else self.kept

    def split(self) -> tuple[str, str]:
        """The text before and after the secret."""
        before, after = self.template.split("{s}")
        return before, after


@dataclass(frozen=True)
class RuleFixture:
    """One rule's fixtures; `make` builds the secret text, whose first `keep` characters are its fixed prefix."""

    number: int
    rule_id: str
    make: Callable[[random.Random], str]
    keep: int
    positives: tuple[Positive, ...]
    negatives: tuple[str, ...]

    def secret(self, seed: int = 0) -> str:
        """The secret for one seed (deterministic)."""
        return self.make(random.Random(f"{self.rule_id}:{seed}"))

    def body(self, secret: str) -> str:
        """The random body of a secret."""
        return secret[self.keep :]


def prefixed(prefix: str, alphabet: str, size: int) -> Callable[[random.Random], str]:
    """A secret made of a fixed prefix and a random body."""
    return lambda rng: prefix + rand(rng, alphabet, size)


def _basic(rng: random.Random) -> str:
    return base64.b64encode(f"user{rand(rng, ALNUM, 6)}:{rand(rng, ALNUM, 24)}".encode()).decode()


def _pem_b64(rng: random.Random) -> str:
    header = b"-----BEGIN PRIVATE KEY-----\n"
    return base64.b64encode(header + rand(rng, B64, 120).encode()).decode()


def _jwt(rng: random.Random) -> str:
    return "eyJ" + rand(rng, B64URL, 30) + ".eyJ" + rand(rng, B64URL, 40) + "." + rand(rng, B64URL, 43)


def _jwt_b64(rng: random.Random) -> str:
    return base64.b64encode(_jwt(rng).encode()).decode().rstrip("=")


def _azure(rng: random.Random) -> str:
    return rand(rng, ALNUM + "_~.", 3) + rand(rng, string.digits, 1) + "Q~" + rand(rng, ALNUM + "_~.-", 34)


def _slack(rng: random.Random) -> str:
    return "xoxb-" + rand(rng, string.digits, 12) + "-" + rand(rng, string.digits, 12) + "-" + rand(rng, ALNUM, 24)


def _webhook(rng: random.Random) -> str:
    return "T" + rand(rng, UPPER_DIGITS, 8) + "/B" + rand(rng, UPPER_DIGITS, 8) + "/" + rand(rng, ALNUM, 24)


def _sendgrid(rng: random.Random) -> str:
    return "SG." + rand(rng, B64URL, 22) + "." + rand(rng, B64URL, 43)


def _glsa(rng: random.Random) -> str:
    return "glsa_" + rand(rng, ALNUM, 32) + "_" + rand(rng, HEX, 8)


def _vault_hex(rng: random.Random) -> str:
    return rand(rng, HEX, 80)


def _docker_auth(rng: random.Random) -> str:
    return base64.b64encode(f"robot:{rand(rng, ALNUM, 30)}".encode()).decode().rstrip("=")


def _azure_key(rng: random.Random) -> str:
    return rand(rng, B64, 86) + "=="


def _b64_lines(rng: random.Random) -> str:
    return rand(rng, B64, 64)


PEM_PUBLIC = "-----BEGIN PUBLIC KEY-----\nMIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEA\n-----END PUBLIC KEY-----\n"
PPK_HEAD = (
    "PuTTY-User-Key-File-3: ssh-ed25519\nEncryption: none\nComment: eddsa-key-20240101\nPublic-Lines: 2\n"
    "AAAAC3NzaC1lZDI1NTE5AAAAIBqPublicPartOne\nAAAAPublicPartTwo\n"
)
CERT_B64 = base64.b64encode(b"-----BEGIN CERTIFICATE-----\nMIIDdzCCAl+gAwIBAgIEAgAAuTANBgkqhkiG9w0BAQUFADBa\n").decode()


FIXTURES: tuple[RuleFixture, ...] = (
    RuleFixture(1, "pem_private_key", _b64_lines, 0, (
        Positive("-----BEGIN PRIVATE KEY-----\n{s}\n-----END PRIVATE KEY-----\n"),
        Positive('{"key": "-----BEGIN RSA PRIVATE KEY-----\\n{s}\\n-----END RSA PRIVATE KEY-----\\n"}'),
        Positive("ssh_key: |\n  -----BEGIN OPENSSH PRIVATE KEY-----\n  {s}\n  -----END OPENSSH PRIVATE KEY-----\n"),
        Positive("-----BEGIN ENCRYPTED PRIVATE KEY-----\r\n{s}\r\n-----END ENCRYPTED PRIVATE KEY-----"),
    ), (PEM_PUBLIC, "-----BEGIN CERTIFICATE-----\nMIIDdzCCAl+gAwIBAgIEAgAAuTAN\n-----END CERTIFICATE-----\n")),
    RuleFixture(2, "pgp_private_key", _b64_lines, 0, (
        Positive("-----BEGIN PGP PRIVATE KEY BLOCK-----\n\n{s}\n=AbCd\n-----END PGP PRIVATE KEY BLOCK-----\n"),
        Positive('{"gpg": "-----BEGIN PGP SECRET KEY BLOCK-----\\n\\n{s}\\n-----END PGP SECRET KEY BLOCK-----"}'),
        Positive("gpg --import <<'EOF'\n-----BEGIN PGP PRIVATE KEY BLOCK-----\n{s}\n-----END PGP PRIVATE KEY BLOCK-----\nEOF\n"),
    ), ("-----BEGIN PGP PUBLIC KEY BLOCK-----\n\nmQINBGRhbGljZQ\n=AbCd\n-----END PGP PUBLIC KEY BLOCK-----\n",)),
    RuleFixture(3, "putty_private_key", _b64_lines, 0, (
        Positive(PPK_HEAD + "Private-Lines: 1\n{s}\nPrivate-MAC: 0f3a9c\n", kept=PPK_HEAD + "Private-Lines: "),
        Positive('{"ppk": "' + PPK_HEAD.replace("\n", "\\n") + 'Private-Lines: 1\\n{s}\\nPrivate-MAC: 0f3a\\n"}',
                 kept='{"ppk": "' + PPK_HEAD.replace("\n", "\\n") + "Private-Lines: "),
        Positive("cat > id.ppk <<'EOF'\n" + PPK_HEAD + "Private-Lines: 1\n{s}\nPrivate-MAC: 77aa\nEOF\n",
                 kept="cat > id.ppk <<'EOF'\n" + PPK_HEAD + "Private-Lines: "),
    ), (PPK_HEAD, "the Private-Lines: field of a key file lists the private part")),
    RuleFixture(4, "ssh2_private_key", _b64_lines, 0, (
        Positive('---- BEGIN SSH2 ENCRYPTED PRIVATE KEY ----\nComment: "rsa-key"\n{s}\n---- END SSH2 ENCRYPTED PRIVATE KEY ----\n',
                 kept="---- BEGIN SSH2 ENCRYPTED PRIVATE KEY ----\n"),
        Positive('{"k": "---- BEGIN SSH2 ENCRYPTED PRIVATE KEY ----\\n{s}\\n---- END SSH2 ENCRYPTED PRIVATE KEY ----"}'),
        Positive("cat <<EOF\n---- BEGIN SSH2 ENCRYPTED PRIVATE KEY ----\n{s}\n---- END SSH2 ENCRYPTED PRIVATE KEY ----\nEOF\n"),
    ), ("---- BEGIN SSH2 PUBLIC KEY ----\nAAAAB3NzaC1yc2EAAAADAQABAAABAQ\n---- END SSH2 PUBLIC KEY ----\n",)),
    RuleFixture(5, "pem_base64", _pem_b64, 14, (
        Positive("the key material is {s} in base64"),
        Positive('{"tls_key_b64": "{s}"}'),
        Positive("export TLS_KEY_B64={s}\n"),
    ), (f"certificate: {CERT_B64} (public)",)),
    RuleFixture(6, "auth_header", prefixed("", ALNUM, 40), 0, (
        Positive("Authorization: Bearer {s}\r\nHost: api.example.com\r\n"),
        Positive('curl -H "Authorization: token {s}" https://api.example.com/user'),
        Positive('{"headers": {"authorization": "{s}", "accept": "*/*"}}'),
        Positive('{"req": "{\\"Proxy-Authorization\\": \\"Basic {s}\\"}"}'),
    ), ("the Authorization header is required", "proxy-authorization flow completed")),
    RuleFixture(7, "bearer_token", prefixed("", "abcdefghij0123456789._-", 40), 0, (
        Positive("call the API with Bearer {s} please"),
        Positive('{"header": "Bearer {s}"}'),
        Positive('curl -H "X-Custom: bearer {s}" https://api.example.com'),
    ), ("Bearer authentication is configured", "bearer tokens expire hourly")),
    RuleFixture(8, "basic_credentials", _basic, 0, (
        Positive("send Basic {s} to the proxy"),
        Positive('{"hdr": "Basic {s}"}'),
        Positive('curl -H "X-Proxy: basic {s}" https://proxy.example.com'),
    ), ("Basic authentication is required for this endpoint", "basic settings apply")),
    RuleFixture(9, "api_key_header", prefixed("", ALNUM, 32), 0, (
        Positive("X-API-Key: {s}\r\nAccept: */*\r\n"),
        Positive("curl -H 'x-goog-api-key: {s}' https://api.example.com"),
        Positive('{"headers": {"Ocp-Apim-Subscription-Key": "{s}"}}'),
        Positive("PRIVATE-TOKEN: {s}\n"),
    ), ("the x-api-key header is missing", "Ocp-Apim-Subscription-Key is documented")),
    RuleFixture(10, "cookie_header", prefixed("", ALNUM, 32), 0, (
        Positive("Cookie: sid={s}; theme=dark\r\n", kept="Cookie: "),
        Positive('curl -H "Cookie: session_id={s}" https://app.example.com', kept='curl -H "Cookie: '),
        Positive('{"raw_headers": "Set-Cookie: token={s}; HttpOnly"}', kept='{"raw_headers": "Set-Cookie: '),
    ), ("cookie jar is empty", "accept cookies? yes")),
    RuleFixture(11, "url_userinfo", prefixed("user:", ALNUM, 20), 5, (
        Positive("postgres://{s}@db.internal:5432/app"),
        Positive('{"remote": "https://{s}@git.example.com/org/repo.git"}'),
        Positive("DATABASE_URL=mysql://{s}@127.0.0.1/app\n"),
    ), ("https://registry.npmjs.org/@scope/pkg", "see https://example.com/docs for details")),
    RuleFixture(12, "dsn_password", prefixed("", ALNUM, 24), 0, (
        Positive("Server=db.internal;Database=app;User Id=sa;Password={s};Encrypt=true"),
        Positive("host=db.internal port=5432 dbname=app user=app password='{s}' sslmode=require"),
        Positive('{"conn": "Data Source=db;Initial Catalog=app;User ID=sa;Pwd={s};"}'),
        Positive("jdbc:postgresql://db:5432/app?user=app&password={s}&ssl=true"),
    ), ("Server=db;Password=;Database=app", "host=db.internal user=app passfile=/run/pgpass")),
    RuleFixture(13, "kv_secret", prefixed("", ALNUM, 24), 0, (
        Positive("password={s}"),
        Positive("db:\n  password: {s}\n  user: app\n"),
        Positive('{"cmd": "connect --opts secret={s}"}'),
        Positive("api_key => '{s}'"),
    ), ("max_tokens: 100", "token_type=bearer", "password_file=/run/x", "PWD=/home/alice", "password: null",
        "secret=${SECRET}", "password=********", "token_count=42")),
    RuleFixture(14, "json_secret", prefixed("", ALNUM, 24), 0, (
        Positive('{"password": "{s}"}'),
        Positive('{"body": "{\\"api_key\\": \\"{s}\\"}"}'),
        Positive('{"client_secret":"{s}","x":1}'),
    ), ('{"token_type": "bearer", "password": null, "max_tokens": 100}', '{"secret_name": "prod-db"}')),
    # Commas end a kv_secret value but not a shell word, so this rule's span is the longer one.
    RuleFixture(15, "env_secret", lambda rng: rand(rng, ALNUM, 15) + "," + rand(rng, ALNUM + ",", 14), 0, (
        Positive("export DB_PASSWORD={s}\n"),
        Positive("docker run -e API_TOKEN={s} app:latest"),
        Positive("SECRET_KEY_FOR_THE_NIGHTLY_BACKUP_JOB={s}\n"),
    ), ("export TOKEN_URL=https://auth.example.com/token", "PASSWORD=$DB_PASS", "SECRET_NAME=prod-db")),
    RuleFixture(16, "cli_secret_flag", prefixed("", ALNUM, 24), 0, (
        Positive("mytool login --password {s} --verbose"),
        Positive('app --client-secret "{s}"'),
        Positive('{"argv": "deploy --token {s} --env prod"}'),
    ), ("docker login --password-stdin", "tool --password --verbose")),
    RuleFixture(17, "curl_user", prefixed("", ALNUM, 20), 0, (
        Positive("curl -u alice:{s} https://api.example.com"),
        Positive('curl --user "bob:{s}" https://api.example.com'),
        Positive('{"cmd": "curl -s -u carol:{s} https://api.example.com"}'),
    ), ("curl -sSL https://get.example.com | sh && git push -u origin main",)),
    RuleFixture(18, "mysql_password_flag", prefixed("", ALNUM, 16), 0, (
        Positive("mysql -u root -p{s} app"),
        Positive("mysqldump --single-transaction -uroot -p{s} shop > shop.sql"),
        Positive('{"cmd": "mariadb -h db -p{s} -e \'select 1\'"}'),
    ), ("mysql -P 3306 -p", "mysql -h db -P 3306 -u app -p app")),
    RuleFixture(19, "netrc_password", prefixed("", ALNUM, 24), 0, (
        Positive("machine api.example.com login alice password {s}"),
        Positive("machine git.example.com\n  login bob\n  password {s}\n"),
        Positive("printf 'machine h login u password {s}\\n' > ~/.netrc"),
    ), ("machine api.example.com login alice", "the machine password policy")),
    RuleFixture(20, "docker_auth", _docker_auth, 0, (
        Positive('{"auths": {"ghcr.io": {"auth": "{s}"}}}'),
        Positive('{"config": "{\\"auths\\":{\\"r\\":{\\"auth\\":\\"{s}\\"}}}"}'),
        Positive("echo '{\"auths\":{\"x\":{\"auth\":\"{s}\"}}}' > ~/.docker/config.json"),
    ), ('{"oauth": "enabled"}', '{"auth": ""}')),
    RuleFixture(21, "npmrc_auth", prefixed("", B64, 32), 0, (
        Positive("_auth={s}\n"),
        Positive("//registry.npmjs.org/:_auth = {s}\n"),
        Positive('{"npmrc": "_auth={s}\\nalways-auth=true"}'),
    ), ("always-auth=true", "_auth_method=none")),
    RuleFixture(22, "kube_secret", prefixed("", B64, 40), 0, (
        Positive("users:\n- name: admin\n  user:\n    client-key-data: {s}\n"),
        Positive("apiVersion: v1\nkind: Secret\nmetadata:\n  name: db\ndata:\n  db-creds: {s}\n"),
        Positive("set client-key-data: {s} in the kubeconfig"),
    ), ("max_tokens: 100", "kind: Secret\ndata:\n  note: short\n")),
    RuleFixture(23, "jwt", _jwt, 3, (
        Positive("the id token {s} here"),
        Positive('{"id_token": "{s}"}'),
        Positive("Authorization: Bearer {s}\r\n"),
    ), ("the word eyJust is not a token.", "xeyJhbGciOiJIUzI1NiJ9.payload")),
    RuleFixture(24, "jwt_base64", _jwt_b64, 4, (
        Positive("encoded {s} here"),
        Positive('{"blob": "{s}"}'),
        Positive("export BLOB={s}\n"),
    ), ("ZXlKshort is short", "ZXlK")),
    RuleFixture(25, "ansible_vault", _vault_hex, 0, (
        Positive("$ANSIBLE_VAULT;1.1;AES256\n{s}\n"),
        Positive("db_pass: !vault |\n  $ANSIBLE_VAULT;1.2;AES256;prod\n  {s}\n"),
        Positive('{"vaulted": "$ANSIBLE_VAULT;1.1;AES256\\n{s}\\n"}'),
    ), ("ansible-vault encrypt secrets.yml", "$ANSIBLE_VAULT;1.1;AES256\n")),
    RuleFixture(26, "age_secret_key", prefixed("AGE-SECRET-KEY-1", BECH32, 58), 16, (
        Positive("# created: 2024-01-01\n{s}\n"),
        Positive('{"age_key": "{s}"}'),
        Positive("export SOPS_AGE_KEY={s}\n"),
    ), ("age1ql3z7hjy54pw3hyww5ayyfg7zqgvc7w3j2elw8zmrj2kg5sfn9aqmcac8p is a recipient",)),
    RuleFixture(27, "aws_access_key_id", prefixed("AKIA", UPPER_DIGITS, 16), 4, (
        Positive("key {s} belongs to ci"),
        Positive('{"AccessKeyId": "{s}"}'),
        Positive("aws_access_key_id = {s}\n"),
    ), ("see AKIAFOO for details", "XAKIAABCDEFGHIJKLMNOP1 is not a key")),
    RuleFixture(28, "aws_secret_key", prefixed("", B64, 40), 0, (
        Positive("aws_sk = {s}\n"),
        Positive('{"aws_sk": "{s}"}'),
        Positive("awsSK: {s}\n"),
        Positive("aws_secret_access_key = {s}\n", winner="kv_secret"),
    ), ("aws_sk = short value", "aws skipped")),
    RuleFixture(29, "aws_session_token", prefixed("", B64 + "=", 120), 0, (
        Positive("aws_session_token = {s}\n", winner="kv_secret"),
        Positive('{"SessionToken": "{s}"}', winner="json_secret"),
        Positive("X-Amz-Security-Token: {s}\r\n", winner="kv_secret"),
    ), ("aws_session_token = null # unset", "x-amz-security-token header")),
    RuleFixture(30, "presigned_url_signature", prefixed("", HEX, 64), 0, (
        Positive("https://bucket.s3.amazonaws.com/r.csv?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Signature={s}"),
        Positive('{"url": "https://storage.googleapis.com/b/o?X-Goog-Signature={s}&X-Goog-Date=20240101T000000Z"}'),
        Positive("curl 'https://b.s3.amazonaws.com/k?x-amz-signature={s}'"),
    ), ("X-Amz-Signature is required", "x-goog-signature header")),
    RuleFixture(31, "aws_bedrock_key", prefixed("ABSK", B64, 140), 4, (
        Positive("bedrock key {s} issued"),
        Positive('{"bedrock": "{s}"}'),
        Positive("export BEDROCK_KEY={s}\n"),
    ), ("ABSKshort is short", "bedrock-api-key-short here")),
    RuleFixture(32, "google_api_key", prefixed("AIza", B64URL, 35), 4, (
        Positive("https://maps.googleapis.com/maps/api/js?key={s}&callback=init"),
        Positive('{"apiKey": "{s}"}'),
        Positive("key {s} for maps"),
    ), ("AIzaShort is short",)),
    RuleFixture(33, "google_oauth_token", prefixed("ya29.", B64URL, 60), 5, (
        Positive("access token {s} expires"),
        Positive('{"access_token": "{s}"}'),
        Positive("curl -H 'Authorization: Bearer {s}' https://www.googleapis.com"),
    ), ("ya29.short is short",)),
    RuleFixture(34, "gcp_private_key_id", prefixed("", HEX, 40), 0, (
        Positive('{"type": "service_account", "private_key_id": "{s}"}'),
        Positive('{"sa": "{\\"private_key_id\\": \\"{s}\\"}"}'),
        Positive('{\n  "private_key_id" : "{s}",\n  "client_email": "x@example.iam.gserviceaccount.com"\n}'),
    ), ('{"private_key_id": "not-hex"}',)),
    RuleFixture(35, "azure_storage_key", _azure_key, 0, (
        Positive("AccountKey={s};EndpointSuffix=core.windows.net"),
        Positive("https://acct.blob.core.windows.net/c/b?sv=2022-11-02&sig={s}&se=2024-01-01"),
        Positive('{"conn": "DefaultEndpointsProtocol=https;AccountName=a;AccountKey={s};EndpointSuffix=core.windows.net"}'),
    ), ("design=modern", "AccountKey=;x")),
    RuleFixture(36, "azure_client_secret", _azure, 6, (
        Positive("client secret {s} rotated"),
        Positive('{"clientSecret": "{s}"}'),
        Positive("AZURE_CLIENT_SECRET={s}\n"),
    ), ("abcQ~xyz is not a secret", "Q~Q~Q~")),
    RuleFixture(37, "github_token", prefixed("ghp_", ALNUM, 36), 4, (
        Positive("token {s} was leaked"),
        Positive('{"token": "{s}"}'),
        Positive("git clone https://x-access-token:{s}@github.com/o/r.git", kept="git clone https://"),
    ), ("ghp_short is short",)),
    RuleFixture(38, "github_fine_grained_pat", prefixed("github_pat_", ALNUM + "_", 82), 11, (
        Positive("pat {s} here"),
        Positive('{"pat": "{s}"}'),
        Positive("GH_PAT={s}\n"),
    ), ("github_pat_x is too short",)),
    RuleFixture(39, "gitlab_token", prefixed("glpat-", B64URL, 20), 6, (
        Positive("token {s} here"),
        Positive('{"gitlab": "{s}"}'),
        Positive("curl --header 'PRIVATE-TOKEN: {s}' https://gitlab.example.com/api/v4/projects"),
    ), ("glpat-short here",)),
    RuleFixture(40, "npm_token", prefixed("npm_", ALNUM, 36), 4, (
        Positive("token {s} here"),
        Positive('{"npm": "{s}"}'),
        Positive("//registry.npmjs.org/:_authToken={s}\n"),
    ), ("npm_config_cache=/tmp/npm",)),
    RuleFixture(41, "pypi_token", prefixed("pypi-AgEIcHlwaS5vcmc", B64URL, 70), 20, (
        Positive("token {s} here"),
        Positive('{"pypi": "{s}"}'),
        Positive("TWINE_PASSWORD={s}\n"),
    ), ("pypi-AgEI is a prefix",)),
    RuleFixture(42, "openai_key", prefixed("sk-proj-", B64URL, 40), 8, (
        Positive("key {s} here"),
        Positive('{"openai": "{s}"}'),
        Positive("OPENAI_API_KEY={s}\n"),
    ), ("sk-proj-short here", "task-proj-1234567890abcdefghij")),
    RuleFixture(43, "anthropic_key", prefixed("sk-ant-api03-", B64URL, 60), 13, (
        Positive("key {s} here"),
        Positive('{"anthropic": "{s}"}'),
        Positive("ANTHROPIC_API_KEY={s}\n"),
    ), ("sk-ant-api03-short here",)),
    RuleFixture(44, "openrouter_key", prefixed("sk-or-v1-", HEX, 64), 9, (
        Positive("key {s} here"),
        Positive('{"openrouter": "{s}"}'),
        Positive("OPENROUTER_API_KEY={s}\n"),
    ), ("sk-or-v1-abc here",)),
    RuleFixture(45, "sk_generic", prefixed("sk-", ALNUM, 30), 3, (
        Positive("key {s} here"),
        Positive('{"key": "{s}"}'),
        Positive("DEEPSEEK_KEY={s}\n"),
    ), ("task-1234567890abcdefghij", "risk-1234567890abcdefghij is low")),
    RuleFixture(46, "huggingface_token", prefixed("hf_", ALNUM, 34), 3, (
        Positive("token {s} here"),
        Positive('{"hf": "{s}"}'),
        Positive("HF_TOKEN={s}\n"),
    ), ("hf_hub_download(repo_id='x')",)),
    RuleFixture(47, "ai_provider_key", prefixed("gsk_", ALNUM, 52), 4, (
        Positive("key {s} here"),
        Positive('{"groq": "{s}"}'),
        Positive("GROQ_API_KEY={s}\n"),
    ), ("gsk_short here",)),
    RuleFixture(48, "ai_keyword_key", prefixed("", ALNUM, 32), 0, (
        Positive("cohere-key: {s}\n"),
        Positive("MISTRAL_KEY={s}\n"),
        Positive('{"voyage_key": "{s}"}'),
    ), ("together_key: short here", "jina_key: null")),
    RuleFixture(49, "slack_token", _slack, 5, (
        Positive("token {s} here"),
        Positive('{"slack": "{s}"}'),
        Positive("SLACK_BOT=\"{s}\"\n"),
    ), ("xoxb-short here",)),
    RuleFixture(50, "webhook_url", _webhook, 0, (
        Positive("https://hooks.slack.com/services/{s}"),
        Positive('{"hook": "https://hooks.slack.com/services/{s}"}'),
        Positive("SLACK_HOOK=https://hooks.slack.com/services/{s}\n"),
    ), ("https://hooks.slack.com/services/ docs",)),
    RuleFixture(51, "stripe_key", prefixed("sk_live_", ALNUM, 24), 8, (
        Positive("key {s} here"),
        Positive('{"stripe": "{s}"}'),
        Positive("STRIPE_KEY={s}\n"),
    ), ("sk_live_short here",)),
    RuleFixture(52, "twilio_key", prefixed("SK", HEX, 32), 2, (
        Positive("key {s} here"),
        Positive('{"twilio": "{s}"}'),
        Positive("TWILIO_KEY_SID={s}\n"),
    ), ("SK0123456789abcdef0123456789abcdef0 end", "TASK0123456789abcdef0123456789abcdef end")),
    RuleFixture(53, "sendgrid_key", _sendgrid, 3, (
        Positive("key {s} here"),
        Positive('{"sendgrid": "{s}"}'),
        Positive("SENDGRID={s}\n"),
    ), ("SG.short here",)),
    RuleFixture(54, "telegram_bot_token", prefixed("123456789:A", B64URL, 34), 10, (
        Positive("bot {s} here"),
        Positive('{"bot": "{s}"}'),
        Positive("https://api.telegram.org/bot{s}/getMe"),
    ), ("12:AB", "time 1234567:Aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa")),
    RuleFixture(55, "vault_token", prefixed("hvs.", B64URL, 90), 4, (
        Positive("token {s} here"),
        Positive('{"vault": "{s}"}'),
        Positive("VAULT_TOKEN={s}\n"),
    ), ("hvs.short here",)),
    RuleFixture(56, "digitalocean_token", prefixed("dop_v1_", HEX, 64), 7, (
        Positive("token {s} here"),
        Positive('{"do": "{s}"}'),
        Positive("DIGITALOCEAN_ACCESS={s}\n"),
    ), ("dop_v1_short here",)),
    RuleFixture(57, "shopify_token", prefixed("shpat_", HEX, 32), 6, (
        Positive("token {s} here"),
        Positive('{"shopify": "{s}"}'),
        Positive("SHOPIFY={s}\n"),
    ), ("shpat_short here",)),
    RuleFixture(58, "observability_token", _glsa, 5, (
        Positive("token {s} here"),
        Positive('{"grafana": "{s}"}'),
        Positive("GRAFANA_SA={s}\n"),
    ), ("dapi_docs here", "glsa_short here")),
    RuleFixture(59, "saas_token", prefixed("lin_api_", ALNUM, 40), 8, (
        Positive("token {s} here"),
        Positive('{"linear": "{s}"}'),
        Positive("LINEAR={s}\n"),
    ), ("lin_api_short here",)),
    RuleFixture(60, "hex_key_context", prefixed("key-", HEX, 32), 4, (
        Positive("mailgun {s} here"),
        Positive('{"mailgun": "{s}"}'),
        Positive("MAILGUN={s}\n"),
    ), ("monkey-0123456789abcdef0123456789abcdef", "api-key-0123456789abcdef0123456789abcdef is a name")),
)

BY_NUMBER = {fixture.number: fixture for fixture in FIXTURES}

# Extra positives for the other shapes of multi-shape rules: (rule number, secret maker, template).
EXTRA_SHAPES: tuple[tuple[int, Callable[[random.Random], str], str], ...] = (
    (1, _b64_lines, "-----BEGIN EC PRIVATE KEY-----\n{s}\n-----END EC PRIVATE KEY-----"),
    (1, _b64_lines, "-----BEGIN DSA PRIVATE KEY-----\n{s}\n-----END DSA PRIVATE KEY-----"),
    (27, prefixed("ASIA", UPPER_DIGITS, 16), "id {s} here"),
    (27, prefixed("A3TX", UPPER_DIGITS, 16), "id {s} here"),
    (31, prefixed("bedrock-api-key-", B64URL, 40), "key {s} here"),
    (33, prefixed("1//0", B64URL, 40), "refresh {s} here"),
    (37, prefixed("ghs_", ALNUM, 36), "token {s} here"),
    (39, prefixed("GR1348941", B64URL, 20), "runner {s} here"),
    (39, prefixed("glrt-", B64URL, 30), "runner {s} here"),
    (41, prefixed("pypi-AgENdGVzdC5weXBpLm9yZw", B64URL, 60), "token {s} here"),
    (42, lambda rng: "sk-" + rand(rng, ALNUM, 20) + "T3BlbkFJ" + rand(rng, ALNUM, 20), "key {s} here"),
    (43, prefixed("sk-ant-admin01-", B64URL, 40), "key {s} here"),
    (46, prefixed("api_org_", ALNUM, 34), "org {s} here"),
    (47, prefixed("xai-", ALNUM, 80), "key {s} here"),
    (47, prefixed("r8_", ALNUM, 37), "key {s} here"),
    (47, prefixed("pplx-", ALNUM, 48), "key {s} here"),
    (47, lambda rng: "lsv2_pt_" + rand(rng, HEX, 32) + "_" + rand(rng, HEX, 10), "key {s} here"),
    (47, prefixed("pcsk_", ALNUM + "_", 40), "key {s} here"),
    (47, prefixed("tvly-", ALNUM + "-", 32), "key {s} here"),
    (49, lambda rng: "xapp-1-A" + rand(rng, UPPER_DIGITS, 10) + "-" + rand(rng, string.digits, 13) + "-"
     + rand(rng, HEX, 64), "app {s} here"),
    (49, prefixed("xoxe.xoxp-1-", ALNUM, 40), "rotating {s} here"),
    (50, lambda rng: rand(rng, string.digits, 18) + "/" + rand(rng, B64URL, 60),
     "https://discord.com/api/webhooks/{s}"),
    (50, lambda rng: rand(rng, ALNUM, 40) + "@" + rand(rng, ALNUM, 30),
     "https://acme.webhook.office.com/webhookb2/{s}"),
    (51, prefixed("rk_test_", ALNUM, 30), "key {s} here"),
    (51, prefixed("whsec_", ALNUM, 32), "secret {s} here"),
    (55, lambda rng: rand(rng, ALNUM.lower()[:36], 14) + ".atlasv1." + rand(rng, HEX + "_=-", 66), "tfc {s} here"),
    (56, prefixed("doo_v1_", HEX, 64), "token {s} here"),
    (57, prefixed("shpss_", HEX, 32), "token {s} here"),
    (58, lambda rng: "dapi" + rand(rng, HEX, 32) + "-2", "token {s} here"),
    (58, prefixed("glc_", B64, 60), "token {s} here"),
    (58, prefixed("sntrys_", B64URL, 60), "token {s} here"),
    (59, lambda rng: "dp.pt." + rand(rng, ALNUM, 43), "token {s} here"),
    (59, prefixed("ops_eyJ", B64URL, 60), "token {s} here"),
    (59, prefixed("ntn_", ALNUM, 46), "token {s} here"),
    (59, lambda rng: "PMAK-" + rand(rng, HEX, 24) + "-" + rand(rng, HEX, 34), "token {s} here"),
    (59, prefixed("dckr_pat_", B64URL, 27), "token {s} here"),
    (59, prefixed("pscale_pw_", ALNUM + "._-", 43), "token {s} here"),
    (59, prefixed("ATATT3", B64URL + "=", 180), "token {s} here"),
    (60, lambda rng: rand(rng, HEX, 32) + "-us12", "mailchimp {s} here"),
)


def benign_corpus(seed: int = 0) -> list[str]:
    """Secret-free text of the kinds the harness logs: ls, git log, pip, UUIDs, SHAs, base64, JSON, prose."""
    rng = random.Random(f"benign:{seed}")
    sha = lambda: rand(rng, HEX, 40)  # noqa: E731 - a local shorthand
    uuid = lambda: "-".join(rand(rng, HEX, n) for n in (8, 4, 4, 4, 12))  # noqa: E731
    pieces = [
        "total 48\n" + "".join(
            f"-rw-r--r-- 1 alice staff {rng.randint(10, 99999):>6} Jan {rng.randint(1, 28):>2} 10:{rng.randint(10, 59)} "
            f"{name}\n" for name in ("README.md", "pyproject.toml", "setup.cfg", "main.py", "tokenizer.py")
        ) + "drwxr-xr-x 5 alice staff   160 Jan  3 09:12 src\n",
        f"commit {sha()}\nAuthor: Alice Example <alice@example.com>\nDate:   Mon Jan 1 10:00:00 2024 +0000\n\n"
        "    Fix token refresh handling in the session cache\n\n"
        f"commit {sha()}\nMerge: {sha()[:7]} {sha()[:7]}\nAuthor: Bob <bob@example.org>\n\n    Merge branch 'main'\n",
        "Requirement already satisfied: requests in ./venv/lib/python3.11/site-packages (2.31.0)\n"
        "Collecting urllib3<3,>=1.21.1\n  Downloading https://files.pythonhosted.org/packages/ab/cd/urllib3-2.2.1-py3-none-any.whl (121 kB)\n"
        "Installing collected packages: urllib3\nSuccessfully installed urllib3-2.2.1\n",
        " ".join(uuid() for _ in range(6)),
        "\n".join(f"{sha()}  src/file_{i}.py" for i in range(6)),
        base64.b64encode(rng.randbytes(600)).decode(),
        '{"name": "app", "port": 8080, "debug": false, "features": ["search", "export"], "timeout_ms": 5000, '
        '"max_tokens": 100, "token_type": "bearer", "password_file": "/run/secrets/db", "retries": 3}',
        '{"logging": {"level": "info", "handlers": ["console"]}, "database": {"host": "db.internal", "pool": 4}}',
        "2024-01-01T00:00:00Z INFO request_id=" + uuid() + " method=GET path=/api/v1/items status=200 duration_ms=12\n"
        "2024-01-01T00:00:01Z WARN retrying upstream call attempt=2 reason=timeout\n",
        "GET /health HTTP/1.1\r\nHost: example.com\r\nAccept: application/json\r\nUser-Agent: curl/8.5.0\r\n\r\n",
        "def tokenize(text: str) -> list[str]:\n    \"\"\"Split text into tokens.\"\"\"\n    return text.split()\n",
        "id,name,email,created\n1,Alice,alice@example.com,2024-01-01\n2,Bob,bob@example.org,2024-01-02\n",
        "The password policy requires rotation every 90 days; see the security handbook for the secret "
        "management process and the API key lifecycle. Basic authentication is disabled and Bearer "
        "authentication is required for every request.",
        "docker login --password-stdin < token.txt && git push -u origin main && mysql -P 3306 -p",
        "See https://docs.example.com/guide and https://registry.npmjs.org/@scope/pkg for details.",
    ]
    return pieces
