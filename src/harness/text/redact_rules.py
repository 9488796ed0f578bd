"""The catalogue of secret shapes (ledger.md §6.6): 60 numbered rules, each a set of literal-first detectors.

Changing anything here changes `RULESET_FINGERPRINT`; bump `RULESET_VERSION` with it.
"""

from __future__ import annotations

import base64
import binascii
from dataclasses import dataclass

from harness.text.redact_detectors import (
    VAL,
    Anchored,
    Base64Pem,
    Block,
    Body,
    BotToken,
    Check,
    Detector,
    DsnValue,
    KeyValue,
    Left,
    MysqlFlag,
    PuttyBlock,
    Quoted,
    SecretManifest,
    Segs,
    Token,
)
from harness.text.redact_pattern import Alt, Lit, Run
from harness.text.redact_spans import CONTEXT, TOKEN


@dataclass(frozen=True)
class Rule:
    """One catalogue entry; `gates` are extra lowercase literals of which one must occur in the text."""

    number: int
    rule_id: str
    rank: int
    detectors: tuple[Detector, ...]
    gates: tuple[bytes, ...] = ()


# Shared pieces of key patterns (regex source after the literal).
SEP = rb"\s{0,4}+(?::=|=>|==|[:=])\s{0,4}+"
QUOTE = rb"(?:\\[\"']|[\"']|)"
VALUE_QUOTE = rb"(?P<q>\\[\"']|[\"']|)"
# A JSON quote plain, escaped once (JSON in a JSON string) or twice (that string echoed in an error document).
JSON_QUOTE = rb'(?:(?:\\\\)?\\"|")'
JSON_VALUE_QUOTE = rb'(?P<q>(?:\\\\)?\\"|")'
JSON_COLON = JSON_QUOTE + rb"\s{0,4}+:\s{0,4}+" + JSON_QUOTE

BARE = Segs((VAL,))
VAL_OR_QVAL = Quoted(BARE)
SHELL_WORD = Segs((Run(rb"^\s\"'\\;&|", 1, 4096),))

ALNUM_LEFT = Left(reject=b"A-Za-z0-9")
WORD_LEFT = Left(reject=b"A-Za-z0-9_-")

# KW (§6.6): each keyword is one literal plus the rest of its spelling.
KEYWORDS = (
    (b"pass", rb"(?:word|wd|phrase)"),
    (b"pwd", b""),
    (b"secret", b""),
    (b"token", b""),
    (b"api", rb"(?:_key|-key|key)"),
    (b"access", rb"(?:_key|-key|key)"),
    (b"auth", rb"(?:_key|-key|key)"),
    (b"private", rb"(?:_key|-key|key)"),
    (b"credential", rb"(?:s|)"),
    (b"session", rb"(?:_key|-key|key)"),
    (b"signing", rb"(?:_key|-key|key)"),
    (b"encryption", rb"(?:_key|-key|key)"),
)
ENV_KEYWORDS = (
    (b"SECRET", b""),
    (b"TOKEN", b""),
    (b"PASS", rb"(?:WORD|WD|PHRASE)"),
    (b"API", rb"(?:_KEY|KEY)"),
    (b"PRIVATE_KEY", b""),
    (b"ACCESS_KEY", b""),
    (b"CREDENTIAL", rb"(?:S|)"),
)


def _has_digit_or_mark(buf: bytes, start: int, end: int, at_end: bool) -> bool:
    return any(byte in b"0123456789._~+/=-" for byte in buf[start:end])


def _decodes_with_colon(buf: bytes, start: int, end: int, at_end: bool) -> bool:
    if at_end:
        return True
    value = buf[start:end]
    try:
        decoded = base64.b64decode(value + b"=" * (-len(value) % 4))
    except (binascii.Error, ValueError):
        return False
    return b":" in decoded


def _not_a_flag(buf: bytes, start: int, end: int, at_end: bool) -> bool:
    return buf[start : start + 1] != b"-"


BEARER_CHECK = Check("contains a digit or one of ._~+/=-", _has_digit_or_mark)
BASIC_CHECK = Check("decodes to text containing ':' (always at end of input)", _decodes_with_colon)
NOT_A_FLAG = Check("does not start with '-'", _not_a_flag)


def _tokens(literals: tuple[bytes, ...], *items: Lit | Run | Alt, left: Left = Left()) -> tuple[Token, ...]:
    return tuple(Token(literal, tuple(items), left=left) for literal in literals)


def _key_values(literals: tuple[bytes, ...], key: bytes, value: Segs | Quoted, **kwargs: object) -> tuple[KeyValue, ...]:
    return tuple(KeyValue(literal, key, value, **kwargs) for literal in literals)  # type: ignore[arg-type]


B64URL = b"A-Za-z0-9_-"
JWT_RUN = Run(B64URL, 0, 8192)
JWT_TAIL = Alt(
    (
        (Lit(b"."), JWT_RUN, Lit(b"."), JWT_RUN, Lit(b"."), JWT_RUN),
        (Lit(b"."), JWT_RUN, Lit(b"."), JWT_RUN),
        (Lit(b"."), JWT_RUN),
        (),
    )
)
SCHEMES = (
    rb"(?:bearer\s{1,8}+|basic\s{1,8}+|token\s{1,8}+|digest\s{1,8}+|negotiate\s{1,8}+|dpop\s{1,8}+"
    rb"|apikey\s{1,8}+|sso-key\s{1,8}+|)"
)
AI_VENDORS = (b"cohere", b"mistral", b"deepseek", b"together", b"fireworks", b"voyage", b"jina", b"ai21")


CATALOGUE: tuple[Rule, ...] = (
    Rule(1, "pem_private_key", CONTEXT, (Block(b"-----BEGIN", rb"[ A-Z0-9_-]{0,100}PRIVATE KEY-----", b"-----END"),)),
    Rule(2, "pgp_private_key", CONTEXT, (Block(b"-----BEGIN PGP ", rb"(?:PRIVATE|SECRET) KEY BLOCK-----", b"-----END"),)),
    Rule(3, "putty_private_key", CONTEXT, (PuttyBlock(),), gates=(b"putty-user-key-file-",)),
    Rule(4, "ssh2_private_key", CONTEXT, (Block(b"---- BEGIN SSH2 ENCRYPTED PRIVATE KEY ----", b"", b"---- END SSH2"),)),
    Rule(5, "pem_base64", TOKEN, (Base64Pem(),)),
    Rule(6, "auth_header", CONTEXT, (KeyValue(b"authorization", QUOTE + SEP + QUOTE + SCHEMES, BARE),)),
    Rule(7, "bearer_token", CONTEXT, (
        KeyValue(b"bearer", rb"\s{1,8}+", Segs((Run(b"a-z0-9._~+/=-", 8, 4096),)), check=BEARER_CHECK),
    )),
    Rule(8, "basic_credentials", CONTEXT, (
        KeyValue(b"basic", rb"\s{1,8}+", Segs((Run(b"a-z0-9+/", 8, 4096), Run(b"=", 0, 2))), check=BASIC_CHECK),
    )),
    Rule(9, "api_key_header", CONTEXT, _key_values(
        (b"api-key", b"x-auth-token", b"x-access-token", b"private-token", b"ocp-apim-subscription-key",
         b"x-functions-key", b"x-vault-token"),
        QUOTE + rb"\s{0,4}+[:=]\s{0,4}+" + QUOTE, BARE)),
    Rule(10, "cookie_header", CONTEXT, (KeyValue(b"cookie", rb"\s{0,4}+:\s{0,4}+", Segs((Run(rb"^\r\n\"\\", 1, 4096),))),)),
    Rule(11, "url_userinfo", CONTEXT, (KeyValue(b"://", b"", Segs(
        (Run(rb"^/\s:@\"'\\", 1, 256), Lit(b":"), Run(rb"^/\s@\"'\\", 1, 4096)), partial_from=2, follow=b"@")),)),
    Rule(12, "dsn_password", CONTEXT, _key_values(
        (b"password", b"pwd"), rb"\s{0,4}+=\s{0,4}+", DsnValue(), left=Left(accept=rb";?&\s")),
        gates=(b"://", b"host=", b"server=", b"data source=")),
    Rule(13, "kv_secret", CONTEXT, tuple(
        KeyValue(literal, rest + rb"(?P<sfx>[a-z0-9_.-]{0,20}+)" + SEP + VALUE_QUOTE, VAL_OR_QVAL, stops=True)
        for literal, rest in KEYWORDS)),
    Rule(14, "json_secret", CONTEXT, tuple(
        KeyValue(literal, rest + rb"(?P<sfx>[a-z0-9_.-]{0,30}+)" + JSON_QUOTE + rb"\s{0,4}+:\s{0,4}+" + JSON_VALUE_QUOTE,
                 Quoted(None), stops=True)
        for literal, rest in KEYWORDS)),
    Rule(15, "env_secret", CONTEXT, tuple(
        KeyValue(literal, rest + rb"(?P<sfx>[A-Z0-9_]{0,40}+)=" + VALUE_QUOTE, Quoted(SHELL_WORD), original=True, stops=True)
        for literal, rest in ENV_KEYWORDS)),
    Rule(16, "cli_secret_flag", CONTEXT, _key_values(
        (b"--password", b"--passwd", b"--token", b"--api-key", b"--apikey", b"--api_key", b"--secret",
         b"--client-secret", b"--auth-token", b"--access-token"),
        rb"(?:=|\s{1,8}+)" + VALUE_QUOTE, VAL_OR_QVAL, stops=True, check=NOT_A_FLAG)),
    Rule(17, "curl_user", CONTEXT, _key_values(
        (b"-u", b"--user"), rb"(?:\s{1,8}+|=)" + QUOTE + rb"[^\s:\"'\\]{1,256}+:", BARE, left=Left(accept=rb"\s\"'")),
        gates=(b"curl",)),
    Rule(18, "mysql_password_flag", CONTEXT, (MysqlFlag(b"mysql"), MysqlFlag(b"mariadb"))),
    Rule(19, "netrc_password", CONTEXT, (KeyValue(
        b"machine", rb"\s{1,16}+\S{1,256}+\s{1,16}+login\s{1,16}+\S{1,256}+\s{1,16}+password\s{1,16}+",
        Segs((Run(rb"^\s", 1, 4096),))),)),
    # The key's closing quote may be escaped too (a config.json inside a JSON string).
    Rule(20, "docker_auth", CONTEXT, _key_values(
        (b"auth", b"identitytoken"), JSON_QUOTE + rb"\s{0,4}+:\s{0,4}+" + JSON_VALUE_QUOTE, Quoted(None), left=Left(accept=b'"'))),
    Rule(21, "npmrc_auth", CONTEXT, (
        KeyValue(b"_auth", rb"(?:token|)\s{0,4}+=\s{0,4}+", BARE),
        KeyValue(b"_password", rb"\s{0,4}+=\s{0,4}+", BARE),
    )),
    Rule(22, "kube_secret", CONTEXT, (
        *_key_values((b"client-key-data", b"id-token", b"refresh-token", b"access-token", b"token"),
                     rb"\s{0,4}+:\s{0,4}+" + QUOTE, BARE, left=Left(reject=b"a-z0-9_-")),
        SecretManifest(),
    )),
    Rule(23, "jwt", TOKEN, (Token(b"eyJ", (Run(B64URL, 10, 4096), Lit(b"."), JWT_RUN, JWT_TAIL), left=WORD_LEFT),)),
    Rule(24, "jwt_base64", TOKEN, _tokens((b"ZXlK",), Run(b"A-Za-z0-9+/", 40, 8192), Run(b"=", 0, 2))),
    Rule(25, "ansible_vault", CONTEXT, (KeyValue(
        b"$ANSIBLE_VAULT;1.", rb"[12];AES256(?:;[^\s\"'\\]{1,256}+|)", Body(rb"(?:[0-9a-fA-F\r\n ]|\\n){1,65536}+"),
        original=True),)),
    Rule(26, "age_secret_key", TOKEN, _tokens((b"AGE-SECRET-KEY-1",), Run(b"QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L", 58, 58))),
    Rule(27, "aws_access_key_id", TOKEN, (
        Token(b"A3T", (Run(b"A-Z0-9", 1, 1), Run(b"A-Z0-9", 16, 16)), left=ALNUM_LEFT),
        *_tokens((b"AKIA", b"ASIA", b"ABIA", b"ACCA"), Run(b"A-Z0-9", 16, 16), left=ALNUM_LEFT),
    )),
    # The first suffix must backtrack to find `secret`/`sk`; it is bounded to 20 bytes per start.
    Rule(28, "aws_secret_key", CONTEXT, (KeyValue(
        b"aws", rb"[a-z0-9_.-]{0,20}(?:secret|sk)[a-z0-9_.-]{0,20}+" + QUOTE + SEP + QUOTE,
        Segs((Run(b"a-z0-9/+", 40, 40),))),)),
    Rule(29, "aws_session_token", CONTEXT, (
        *_key_values((b"aws_session_token", b"aws_security_token", b"x-amz-security-token"), QUOTE + SEP + QUOTE,
                     Segs((Run(b"a-z0-9/+=%", 16, 8192),))),
        KeyValue(b"sessiontoken", JSON_COLON, Segs((Run(b"a-z0-9/+=%", 16, 8192),))),
    )),
    Rule(30, "presigned_url_signature", CONTEXT, _key_values(
        (b"x-amz-signature=", b"x-amz-credential=", b"x-goog-signature=", b"x-goog-credential="), b"",
        Segs((Run(rb"^&\s\"'#\\", 1, 4096),)))),
    Rule(31, "aws_bedrock_key", TOKEN, (
        *_tokens((b"ABSK",), Run(b"A-Za-z0-9+/", 109, 269), Run(b"=", 0, 2)),
        *_tokens((b"bedrock-api-key-",), Run(b"A-Za-z0-9+/=%_-", 16, 8192)),
    )),
    Rule(32, "google_api_key", TOKEN, _tokens((b"AIza",), Run(b"0-9A-Za-z_-", 35, 35))),
    Rule(33, "google_oauth_token", TOKEN, (
        *_tokens((b"ya29.",), Run(b"0-9A-Za-z_-", 20, 4096)),
        *_tokens((b"1//0",), Run(b"0-9A-Za-z_-", 30, 4096)),
    )),
    Rule(34, "gcp_private_key_id", CONTEXT, (KeyValue(b"private_key_id", JSON_COLON, Segs((Run(b"0-9a-f", 40, 40),))),)),
    Rule(35, "azure_storage_key", CONTEXT, (
        *_key_values((b"accountkey=", b"sharedaccesskey="), b"", Segs((Run(rb"^;\s\"'\\", 1, 1024),))),
        KeyValue(b"sig=", b"", Segs((Run(rb"^&\s\"'#\\", 1, 1024),)), left=Left(accept=b"?&")),
    )),
    Rule(36, "azure_client_secret", TOKEN, (Anchored(b"Q~", (Run(b"A-Za-z0-9_~.-", 31, 34),), rb"[A-Za-z0-9_~.]{3}[0-9]", 4),)),
    Rule(37, "github_token", TOKEN, _tokens((b"ghp_", b"gho_", b"ghu_", b"ghs_", b"ghr_"), Run(b"A-Za-z0-9", 36, 255))),
    Rule(38, "github_fine_grained_pat", TOKEN, _tokens((b"github_pat_",), Run(b"A-Za-z0-9_", 22, 255))),
    Rule(39, "gitlab_token", TOKEN, (
        *_tokens((b"glpat-", b"gldt-", b"glrt-", b"glptt-", b"glcbt-", b"glft-", b"glffct-", b"glsoat-", b"gloas-",
                  b"glimt-", b"glagent-"), Run(b"A-Za-z0-9_.-", 20, 255)),
        *_tokens((b"GR1348941",), Run(b"A-Za-z0-9_-", 20, 64)),
    )),
    Rule(40, "npm_token", TOKEN, _tokens((b"npm_",), Run(b"A-Za-z0-9", 36, 36))),
    Rule(41, "pypi_token", TOKEN, _tokens((b"pypi-AgEIcHlwaS5vcmc", b"pypi-AgENdGVzdC5weXBpLm9yZw"), Run(B64URL, 50, 4096))),
    Rule(42, "openai_key", TOKEN, (
        *_tokens((b"sk-proj-", b"sk-svcacct-", b"sk-admin-"), Run(B64URL, 20, 4096), left=WORD_LEFT),
        *_tokens((b"sk-",), Run(b"A-Za-z0-9", 20, 20), Lit(b"T3BlbkFJ"), Run(b"A-Za-z0-9", 20, 20), left=WORD_LEFT),
    )),
    Rule(43, "anthropic_key", TOKEN, _tokens(
        (b"sk-ant-api", b"sk-ant-admin", b"sk-ant-oat"), Run(b"0-9", 2, 2), Lit(b"-"), Run(B64URL, 20, 4096),
        left=WORD_LEFT)),
    # Like rule 45, every `sk-` form has the left check, so `task-…` and `risk-…` are kept.
    Rule(44, "openrouter_key", TOKEN, _tokens((b"sk-or-v1-",), Run(b"a-f0-9", 64, 64), left=WORD_LEFT)),
    Rule(45, "sk_generic", TOKEN, _tokens((b"sk-",), Run(B64URL, 20, 4096), left=WORD_LEFT)),
    Rule(46, "huggingface_token", TOKEN, _tokens((b"hf_", b"api_org_"), Run(b"A-Za-z0-9", 34, 34))),
    Rule(47, "ai_provider_key", TOKEN, (
        *_tokens((b"gsk_",), Run(b"A-Za-z0-9", 52, 52)),
        *_tokens((b"xai-",), Run(b"A-Za-z0-9", 80, 80)),
        *_tokens((b"r8_",), Run(b"A-Za-z0-9", 37, 37)),
        *_tokens((b"pplx-",), Run(b"A-Za-z0-9", 48, 48)),
        *_tokens((b"lsv2_pt_", b"lsv2_sk_"), Run(b"a-f0-9", 32, 32), Lit(b"_"), Run(b"a-f0-9", 10, 10)),
        *_tokens((b"pcsk_",), Run(b"A-Za-z0-9_", 20, 256)),
        *_tokens((b"tvly-",), Run(b"A-Za-z0-9-", 20, 256)),
    )),
    Rule(48, "ai_keyword_key", CONTEXT, _key_values(
        AI_VENDORS, rb"(?:[_-]|)(?:api[_-]|api|)(?P<kw>key|token)" + QUOTE + SEP + QUOTE,
        Segs((Run(b"a-z0-9_-", 16, 256),)), stops=True)),
    Rule(49, "slack_token", TOKEN, (
        *_tokens((b"xox",), Run(b"abposer", 1, 1), Lit(b"-"), Run(b"0-9A-Za-z-", 10, 255)),
        *_tokens((b"xoxe.xox",), Run(b"bp", 1, 1), Lit(b"-"), Run(b"0-9A-Za-z-", 10, 255)),
        *_tokens((b"xapp-",), Run(b"0-9", 1, 1), Lit(b"-"), Run(b"A-Z0-9", 1, 32), Lit(b"-"), Run(b"0-9", 1, 20),
                 Lit(b"-"), Run(b"a-z0-9", 8, 128)),
    )),
    Rule(50, "webhook_url", CONTEXT, (
        KeyValue(b"hooks.slack.com/", rb"(?:services|workflows|triggers)/", Segs((Run(b"a-z0-9/_-", 8, 256),))),
        *_key_values((b"discord.com/api/webhooks/", b"discordapp.com/api/webhooks/"), b"",
                     Segs((Run(b"0-9", 1, 20), Lit(b"/"), Run(b"a-z0-9_-", 1, 128)))),
        KeyValue(b".webhook.office.com/webhookb2/", b"", Segs((Run(rb"^\s\"'\\?#", 8, 512),))),
    )),
    Rule(51, "stripe_key", TOKEN, (
        *_tokens((b"sk_live_", b"sk_test_", b"sk_prod_", b"rk_live_", b"rk_test_", b"rk_prod_"), Run(b"A-Za-z0-9", 10, 99)),
        *_tokens((b"whsec_",), Run(b"A-Za-z0-9", 24, 64)),
    )),
    Rule(52, "twilio_key", TOKEN, (Token(b"SK", (Run(b"0-9a-fA-F", 32, 32),), left=ALNUM_LEFT, right_reject=b"A-Za-z0-9"),)),
    Rule(53, "sendgrid_key", TOKEN, _tokens((b"SG.",), Run(B64URL, 22, 22), Lit(b"."), Run(B64URL, 43, 43))),
    Rule(54, "telegram_bot_token", TOKEN, (BotToken(),)),
    Rule(55, "vault_token", TOKEN, (
        *_tokens((b"hvs.", b"hvb.", b"hvr."), Run(B64URL, 24, 4096)),
        Anchored(b".atlasv1.", (Run(b"a-z0-9_=-", 60, 70),), rb"[a-z0-9]{14}", 14),
    )),
    Rule(56, "digitalocean_token", TOKEN, _tokens((b"dop_v1_", b"doo_v1_", b"dor_v1_"), Run(b"a-f0-9", 64, 64))),
    Rule(57, "shopify_token", TOKEN, _tokens((b"shpat_", b"shpca_", b"shppa_", b"shpss_"), Run(b"a-fA-F0-9", 32, 32))),
    Rule(58, "observability_token", TOKEN, (
        *_tokens((b"dapi",), Run(b"a-f0-9", 32, 32), Alt(((Lit(b"-"), Run(b"0-9", 1, 1)), ()))),
        *_tokens((b"glsa_",), Run(b"A-Za-z0-9", 32, 32), Lit(b"_"), Run(b"A-Fa-f0-9", 8, 8)),
        *_tokens((b"glc_",), Run(b"A-Za-z0-9+/", 32, 400), Run(b"=", 0, 2)),
        *_tokens((b"sntrys_", b"sntryu_"), Run(b"A-Za-z0-9+/=._-", 20, 4096)),
    )),
    Rule(59, "saas_token", TOKEN, (
        *_tokens((b"dp.pt.", b"dp.st.", b"dp.sa.", b"dp.ct.", b"dp.scim.", b"dp.audit."), Run(b"A-Za-z0-9", 40, 44)),
        *_tokens((b"ops_eyJ",), Run(b"A-Za-z0-9+/=_-", 40, 4096)),
        *_tokens((b"lin_api_",), Run(b"A-Za-z0-9", 40, 40)),
        *_tokens((b"ntn_",), Run(b"A-Za-z0-9", 40, 50)),
        *_tokens((b"PMAK-",), Run(b"a-f0-9", 24, 24), Lit(b"-"), Run(b"a-f0-9", 34, 34)),
        *_tokens((b"dckr_pat_", b"dckr_oat_"), Run(B64URL, 27, 64)),
        *_tokens((b"pscale_tkn_", b"pscale_pw_", b"pscale_oauth_"), Run(b"A-Za-z0-9=._-", 32, 64)),
        *_tokens((b"ATATT3",), Run(b"A-Za-z0-9_=-", 100, 300)),
    )),
    Rule(60, "hex_key_context", TOKEN, (
        *_tokens((b"key-",), Run(b"a-f0-9", 32, 32), left=WORD_LEFT),
        Anchored(b"-us", (Run(b"0-9", 1, 2),), rb"[0-9a-f]{32}", 32),
    )),
)
