"""A held-out recall set (issue 8): secrets written from the vendors' documented key formats, apart from the rules.

Written after the catalogue (rules 1-220) was frozen and never derived from its examples: each format
below is the documented prefix, alphabet and length of a credential, and each secret is drawn at run time
from a seeded generator, so nothing realistic is committed. Every secret sits in surrounding text of
the kind an agent's tool output carries (an env file, a JSON config, a YAML manifest, a log line, a
command line). `cases()` is what tests/text/test_redact_heldout.py and bench/redact_heldout.py measure.
"""

from __future__ import annotations

import base64
import random
import re
import string
from collections.abc import Callable
from dataclasses import dataclass

ALNUM = string.ascii_letters + string.digits
LOWER_ALNUM = string.ascii_lowercase + string.digits
UPPER_ALNUM = string.ascii_uppercase + string.digits
HEX = "0123456789abcdef"
UPPER_HEX = HEX.upper()
DIGITS = string.digits
B64 = ALNUM + "+/"
B64URL = ALNUM + "-_"
BASE32 = string.ascii_uppercase + "234567"
BECH32 = "qpzry9x8gf2tvdw0s3jn54khce6mua7l".upper()
CRYPT = "./" + ALNUM

# A survivor is any run this long of the secret's own drawn body left in the output.
SURVIVOR_WINDOW = 8
# Placeholders name their rule (`[REDACTED:rubygems_key]`), which must not count as a survivor of `rubygems_...`.
_PLACEHOLDER = re.compile(r"\[REDACTED:[a-z0-9_]{1,24}\]")


@dataclass(frozen=True)
class HeldOut:
    """One planted secret: its family, the text around it, the whole secret, and the drawn bodies that must not survive.

    A documented prefix (`ghp_`, `CLOJARS_`) is not secret and may also occur in the surrounding text (an env
    name), so only the drawn parts count as survivors.
    """

    family: str
    text: str
    secret: str
    bodies: tuple[str, ...]


Gen = Callable[[random.Random], "str | tuple[str, tuple[str, ...]]"]


def draw(rng: random.Random, alphabet: str, n: int) -> str:
    return "".join(rng.choice(alphabet) for _ in range(n))


def uuid(rng: random.Random, alphabet: str = HEX) -> str:
    return "-".join(draw(rng, alphabet, n) for n in (8, 4, 4, 4, 12))


def parts(*pieces: str | tuple[str, int]) -> Gen:
    """A generator for a secret made of literal pieces and (alphabet, length) runs."""

    def gen(rng: random.Random) -> tuple[str, tuple[str, ...]]:
        drawn = [piece if isinstance(piece, str) else draw(rng, *piece) for piece in pieces]
        bodies = tuple(run for run, piece in zip(drawn, pieces) if not isinstance(piece, str))
        return "".join(drawn), bodies

    return gen


# Contexts a token-shaped secret (one with a documented prefix) is found in; {K} an env name, {k} a config key.
TOKEN_CONTEXTS = (
    "export {K}='{s}'",
    '{{"{k}": "{s}", "region": "eu-west-1", "retries": 3}}',
    "2026-03-02T10:14:07Z WARN uploader: request with {s} rejected (401), retrying",
    "spec:\n  env:\n    - name: {K}\n      value: \"{s}\"\n",
    "curl -s -H 'Authorization: Bearer {s}' https://api.example.com/v1/me",
)
# Contexts for secrets recognised by the key that holds them (vendor keys, generic passwords).
KEYED_CONTEXTS = (
    '{K}="{s}"',
    '{{"{k}": "{s}"}}',
    "{k}: '{s}'",
    "[default]\n{k} = {s}\n",
)

# (family, generator, env name, config key, contexts or None for the default set)
FORMATS: list[tuple[str, Gen, str, str, tuple[str, ...] | None]] = [
    ("GitHub classic PAT", parts("ghp_", (ALNUM, 36)), "GH_TOKEN", "github_token", None),
    ("GitHub OAuth token", parts("gho_", (ALNUM, 36)), "GITHUB_OAUTH", "oauth", None),
    ("GitHub app installation token", parts("ghs_", (ALNUM, 36)), "GITHUB_APP_TOKEN", "installation", None),
    ("GitHub fine-grained PAT", parts("github_pat_", (ALNUM, 22), "_", (ALNUM, 59)), "GH_PAT", "pat", None),
    ("GitLab PAT", parts("glpat-", (B64URL, 20)), "GITLAB_TOKEN", "gitlab", None),
    ("GitLab runner token", parts("glrt-", (B64URL, 20)), "RUNNER_TOKEN", "runner", None),
    ("GitLab pipeline trigger token", parts("glptt-", (HEX, 40)), "TRIGGER", "trigger", None),
    ("GitLab runner registration token", parts("GR1348941", (B64URL, 20)), "REG", "registration", None),
    ("AWS access key id", parts("AKIA", (BASE32, 16)), "AWS_ACCESS_KEY_ID", "aws_access_key_id", None),
    ("AWS temporary access key id", parts("ASIA", (BASE32, 16)), "AWS_ACCESS_KEY_ID", "accessKeyId", None),
    ("AWS secret access key", parts((B64, 40)), "AWS_SECRET_ACCESS_KEY", "aws_secret_access_key", KEYED_CONTEXTS),
    ("Google API key", parts("AIza", (B64URL, 35)), "GOOGLE_API_KEY", "maps", None),
    ("Google OAuth access token", parts("ya29.", (B64URL, 120)), "GOOGLE_TOKEN", "access", None),
    ("Google OAuth client secret", parts("GOCSPX-", (B64URL, 28)), "GOOGLE_CLIENT_SECRET", "web", None),
    ("Slack bot token", parts("xoxb-", (DIGITS, 12), "-", (DIGITS, 13), "-", (ALNUM, 24)), "SLACK_BOT_TOKEN", "bot", None),
    ("Slack user token", parts("xoxp-", (DIGITS, 12), "-", (DIGITS, 12), "-", (DIGITS, 13), "-", (HEX, 32)), "SLACK_TOKEN", "user", None),
    ("Slack app token", parts("xapp-1-A", (UPPER_ALNUM, 10), "-", (DIGITS, 13), "-", (HEX, 64)), "SLACK_APP_TOKEN", "app", None),
    ("Stripe secret key", parts("sk_live_", (ALNUM, 99)), "STRIPE_SECRET_KEY", "stripe", None),
    ("Stripe restricted key", parts("rk_live_", (ALNUM, 24)), "STRIPE_RK", "restricted", None),
    ("Stripe webhook secret", parts("whsec_", (ALNUM, 32)), "STRIPE_WEBHOOK_SECRET", "webhook", None),
    ("Twilio API key SID", parts("SK", (HEX, 32)), "TWILIO_API_KEY", "twilio", None),
    ("SendGrid API key", parts("SG.", (B64URL, 22), ".", (B64URL, 43)), "SENDGRID_API_KEY", "sendgrid", None),
    ("npm access token", parts("npm_", (ALNUM, 36)), "NPM_TOKEN", "npm", None),
    ("PyPI API token", parts("pypi-AgEIcHlwaS5vcmc", (B64URL, 140)), "TWINE_PASSWORD", "pypi", None),
    ("OpenAI project key", parts("sk-proj-", (B64URL, 74), "T3BlbkFJ", (B64URL, 74)), "OPENAI_API_KEY", "openai", None),
    ("Anthropic API key", parts("sk-ant-api03-", (B64URL, 93), "AA"), "ANTHROPIC_API_KEY", "anthropic", None),
    ("Hugging Face token", parts("hf_", (string.ascii_letters, 34)), "HF_TOKEN", "hf", None),
    ("Groq API key", parts("gsk_", (ALNUM, 52)), "GROQ_API_KEY", "groq", None),
    ("xAI API key", parts("xai-", (ALNUM, 80)), "XAI_API_KEY", "xai", None),
    ("Perplexity API key", parts("pplx-", (ALNUM, 48)), "PPLX_API_KEY", "pplx", None),
    ("Replicate API token", parts("r8_", (ALNUM, 37)), "REPLICATE_API_TOKEN", "replicate", None),
    ("LangSmith API key", parts("lsv2_pt_", (HEX, 32), "_", (HEX, 10)), "LANGSMITH_API_KEY", "langsmith", None),
    ("Shopify access token", parts("shpat_", (HEX, 32)), "SHOPIFY_TOKEN", "shopify", None),
    ("DigitalOcean PAT", parts("dop_v1_", (HEX, 64)), "DIGITALOCEAN_TOKEN", "do", None),
    ("HashiCorp Vault service token", parts("hvs.", (B64URL, 95)), "VAULT_TOKEN", "vault", None),
    ("Terraform Cloud token", parts((ALNUM, 14), ".atlasv1.", (B64URL, 67)), "TFE_TOKEN", "tfc", None),
    ("Mailgun API key", parts("key-", (HEX, 32)), "MAILGUN_API_KEY", "mailgun", None),
    ("Mailchimp API key", parts((HEX, 32), "-us", (DIGITS, 2)), "MAILCHIMP_KEY", "mailchimp", None),
    ("Telegram bot token", parts((DIGITS, 10), ":AA", (B64URL, 33)), "TELEGRAM_BOT_TOKEN", "telegram", None),
    ("Databricks PAT", parts("dapi", (HEX, 32)), "DATABRICKS_TOKEN", "databricks", None),
    ("Grafana service account token", parts("glsa_", (ALNUM, 32), "_", (HEX, 8)), "GRAFANA_TOKEN", "grafana", None),
    ("Postman API key", parts("PMAK-", (HEX, 24), "-", (HEX, 34)), "POSTMAN_API_KEY", "postman", None),
    ("Linear API key", parts("lin_api_", (ALNUM, 40)), "LINEAR_API_KEY", "linear", None),
    ("Notion integration token", parts("ntn_", (DIGITS, 11), (ALNUM, 35)), "NOTION_TOKEN", "notion", None),
    ("Docker Hub PAT", parts("dckr_pat_", (B64URL, 27)), "DOCKERHUB_TOKEN", "dockerhub", None),
    ("Atlassian API token", parts("ATATT3xFfGF0", (B64URL, 180), "=", (UPPER_HEX, 8)), "JIRA_TOKEN", "atlassian", None),
    ("age secret key", parts("AGE-SECRET-KEY-1", (BECH32, 58)), "SOPS_AGE_KEY", "age", None),
    ("Heroku API key", parts("HRKU-AA", (B64URL, 58)), "HEROKU_API_KEY", "heroku", None),
    ("Supabase access token", parts("sbp_", (HEX, 40)), "SUPABASE_ACCESS_TOKEN", "supabase", None),
    ("Netlify PAT", parts("nfp_", (ALNUM, 36)), "NETLIFY_AUTH_TOKEN", "netlify", None),
    ("Fly.io token", parts("fo1_", (B64URL, 43)), "FLY_API_TOKEN", "fly", None),
    ("Fly.io macaroon", parts("FlyV1 fm2_", (B64, 180)), "FLY_API_TOKEN", "fly", None),
    ("Pulumi access token", parts("pul-", (HEX, 40)), "PULUMI_ACCESS_TOKEN", "pulumi", None),
    ("RubyGems API key", parts("rubygems_", (HEX, 48)), "GEM_HOST_API_KEY", "rubygems", None),
    ("Sentry user token", parts("sntryu_", (HEX, 64)), "SENTRY_AUTH_TOKEN", "sentry", None),
    ("Dynatrace API token", parts("dt0c01.", (UPPER_ALNUM, 24), ".", (UPPER_ALNUM, 64)), "DT_API_TOKEN", "dynatrace", None),
    ("Brevo API key", parts("xkeysib-", (HEX, 64), "-", (ALNUM, 16)), "BREVO_API_KEY", "brevo", None),
    ("Duffel access token", parts("duffel_live_", (B64URL, 43)), "DUFFEL_TOKEN", "duffel", None),
    ("EasyPost API key", parts("EZAK", (ALNUM, 54)), "EASYPOST_API_KEY", "easypost", None),
    ("Shippo API token", parts("shippo_live_", (HEX, 40)), "SHIPPO_TOKEN", "shippo", None),
    ("Alibaba Cloud AccessKey id", parts("LTAI", (ALNUM, 20)), "ALIBABA_CLOUD_ACCESS_KEY_ID", "alibaba", None),
    ("Tencent Cloud SecretId", parts("AKID", (ALNUM, 32)), "TENCENTCLOUD_SECRET_ID", "tencent", None),
    ("ReadMe API key", parts("rdme_", (LOWER_ALNUM, 70)), "README_API_KEY", "readme", None),
    ("Clojars deploy token", parts("CLOJARS_", (LOWER_ALNUM, 60)), "CLOJARS_TOKEN", "clojars", None),
    ("Buildkite API token", parts("bkua_", (HEX, 40)), "BUILDKITE_API_TOKEN", "buildkite", None),
    ("CircleCI PAT", parts("CCIPAT_", (ALNUM, 22), "_", (HEX, 40)), "CIRCLECI_TOKEN", "circleci", None),
    ("Infracost API key", parts("ico-", (ALNUM, 32)), "INFRACOST_API_KEY", "infracost", None),
    ("JFrog API key", parts("AKCp", (ALNUM, 69)), "ARTIFACTORY_API_KEY", "jfrog", None),
    ("Yandex OAuth token", parts("y0_", (B64URL, 55)), "YC_TOKEN", "yandex", None),
    ("HubSpot private app token", parts("pat-na1-", (HEX, 8), "-", (HEX, 4), "-", (HEX, 4), "-", (HEX, 4), "-", (HEX, 12)),
     "HUBSPOT_ACCESS_TOKEN", "hubspot", None),
    ("Cloudflare Origin CA key", parts("v1.0-", (HEX, 24), "-", (HEX, 146)), "CF_ORIGIN_CA_KEY", "origin_ca", None),
    ("OpenShift user token", parts("sha256~", (B64URL, 43)), "OC_TOKEN", "openshift", None),
    ("Octopus Deploy API key", parts("API-", (UPPER_ALNUM, 26)), "OCTOPUS_API_KEY", "octopus", None),
    ("New Relic user key", parts("NRAK-", (UPPER_ALNUM, 27)), "NEW_RELIC_API_KEY", "newrelic", None),
    ("SonarQube user token", parts("squ_", (HEX, 40)), "SONAR_TOKEN", "sonar", None),
    ("Sourcegraph access token", parts("sgp_", (HEX, 16), "_", (HEX, 40)), "SRC_ACCESS_TOKEN", "sourcegraph", None),
    ("Square access token", parts("EAAA", (B64URL, 60)), "SQUARE_ACCESS_TOKEN", "square", None),
    ("Square OAuth secret", parts("sq0csp-", (B64URL, 43)), "SQUARE_OAUTH_SECRET", "square_oauth", None),
    ("Adafruit IO key", parts("aio_", (ALNUM, 28)), "ADAFRUIT_IO_KEY", "adafruit", None),
    ("NuGet API key", parts("oy2", (LOWER_ALNUM, 43)), "NUGET_API_KEY", "nuget", None),
    ("Tailscale auth key", parts("tskey-auth-k", (ALNUM, 11), "CNTRL-", (ALNUM, 33)), "TS_AUTHKEY", "tailscale", None),
    ("1Password service account token", parts("ops_eyJ", (B64, 300)), "OP_SERVICE_ACCOUNT_TOKEN", "op", None),
    ("Azure AD client secret", parts((ALNUM, 3), "8Q~", (B64URL, 34)), "AZURE_CLIENT_SECRET", "azure", None),
    ("Frame.io developer token", parts("fio-u-", (B64URL, 64)), "FRAMEIO_TOKEN", "frameio", None),
    ("Scalingo API token", parts("tk-us-", (B64URL, 48)), "SCALINGO_API_TOKEN", "scalingo", None),
    ("Settlemint PAT", parts("sm_pat_", (ALNUM, 16)), "SETTLEMINT_TOKEN", "settlemint", None),
    ("Harness PAT", parts("pat.", (B64URL, 22), ".", (ALNUM, 24), ".", (ALNUM, 20)), "HARNESS_API_KEY", "harness", None),
    ("ClickHouse Cloud secret", parts("4b1d", (ALNUM, 38)), "CLICKHOUSE_KEY_SECRET", "clickhouse", None),
    ("Render API key", parts("rnd_", (ALNUM, 32)), "RENDER_API_KEY", "render", None),
    ("ElevenLabs API key", parts("sk_", (HEX, 48)), "ELEVENLABS_API_KEY", "elevenlabs", None),
    # Keys recognised by the key that names their vendor.
    ("Datadog API key", parts((HEX, 32)), "DD_API_KEY", "datadog_api_key", KEYED_CONTEXTS),
    ("Datadog application key", parts((HEX, 40)), "DATADOG_APP_KEY", "datadog_application_key", KEYED_CONTEXTS),
    ("Algolia admin key", parts((HEX, 32)), "ALGOLIA_ADMIN_API_KEY", "algolia_admin_key", KEYED_CONTEXTS),
    ("Cloudflare global API key", parts((HEX, 37)), "CLOUDFLARE_API_KEY", "cloudflare_api_key", KEYED_CONTEXTS),
    ("Cloudflare API token", parts((B64URL, 40)), "CLOUDFLARE_API_TOKEN", "cloudflare_token", KEYED_CONTEXTS),
    ("Heroku legacy API key", uuid, "HEROKU_API_KEY", "heroku_api_key", KEYED_CONTEXTS),
    ("Snyk token", uuid, "SNYK_TOKEN", "snyk_token", KEYED_CONTEXTS),
    ("Twilio auth token", parts((HEX, 32)), "TWILIO_AUTH_TOKEN", "twilio_auth_token", KEYED_CONTEXTS),
    ("Okta API token", parts("00", (B64URL, 40)), "OKTA_API_TOKEN", "okta_token", KEYED_CONTEXTS),
    ("Sumo Logic access key", parts((ALNUM, 64)), "SUMO_ACCESS_KEY", "sumologic_access_key", KEYED_CONTEXTS),
    ("Confluent Cloud API secret", parts((ALNUM, 64)), "CONFLUENT_CLOUD_API_SECRET", "confluent_secret", KEYED_CONTEXTS),
    ("PagerDuty API key", parts((B64URL, 20)), "PAGERDUTY_TOKEN", "pagerduty_api_key", KEYED_CONTEXTS),
    ("Meraki API key", parts((HEX, 40)), "MERAKI_DASHBOARD_API_KEY", "meraki_api_key", KEYED_CONTEXTS),
    ("Discord bot token", parts("M", (B64URL, 25), ".", (B64URL, 6), ".", (B64URL, 38)), "DISCORD_TOKEN", "discord_bot_token",
     KEYED_CONTEXTS),
    ("Azure storage account key", parts((B64, 86), "=="), "AZURE_STORAGE_KEY", "storage_account_key", KEYED_CONTEXTS),
]


def _pem(rng: random.Random) -> str:
    return "\n".join(draw(rng, B64, 64) for _ in range(4))


def _crypt_bcrypt(rng: random.Random) -> str:
    return f"$2b$12${draw(rng, CRYPT, 53)}"


def _crypt_sha512(rng: random.Random) -> str:
    return f"$6${draw(rng, CRYPT, 16)}${draw(rng, CRYPT, 86)}"


def _crypt_sha256_rounds(rng: random.Random) -> str:
    return f"$5$rounds=535000${draw(rng, CRYPT, 16)}${draw(rng, CRYPT, 43)}"


def _yescrypt(rng: random.Random) -> str:
    return f"$y$j9T${draw(rng, CRYPT, 22)}${draw(rng, CRYPT, 43)}"


def _argon2(rng: random.Random) -> str:
    return f"$argon2id$v=19$m=19456,t=2,p=1${draw(rng, B64, 22)}${draw(rng, B64, 43)}"


def _django(rng: random.Random) -> str:
    return f"pbkdf2_sha256$870000${draw(rng, ALNUM, 22)}${draw(rng, B64, 43)}="


def _ssha(rng: random.Random) -> str:
    return "{SSHA}" + base64.b64encode(bytes(rng.randrange(256) for _ in range(24))).decode()


def _apr1(rng: random.Random) -> str:
    return f"$apr1${draw(rng, CRYPT, 8)}${draw(rng, CRYPT, 22)}"


def _md5crypt(rng: random.Random) -> str:
    return f"$1${draw(rng, CRYPT, 8)}${draw(rng, CRYPT, 22)}"


def _asrep(rng: random.Random) -> str:
    return f"$krb5asrep$23$svc_sql@CORP.EXAMPLE.COM:{draw(rng, HEX, 32)}${draw(rng, HEX, 300)}"


def _password(rng: random.Random) -> str:
    return draw(rng, ALNUM, 10) + rng.choice("!#%*-_") + draw(rng, DIGITS, 3)


# Secrets that only their syntax gives away: passwords in every form they are written in, hashes, key blocks.
# Each entry is (family, generator, template); the template's {s} is the secret.
SYNTAX: list[tuple[str, Gen, str]] = [
    ("password in env file", _password, "DB_PASSWORD={s}"),
    ("password in shell export", _password, 'export PGPASSWORD="{s}"'),
    ("password in YAML", _password, "database:\n  user: app\n  password: {s}\n"),
    ("password in JSON", _password, '{{"username": "app", "password": "{s}"}}'),
    ("password in TOML", _password, '[database]\nuser = "app"\npassword = "{s}"\n'),
    ("password in INI", _password, "[mysql]\nuser=app\npassword={s}\n"),
    ("password in XML attribute", _password, '<datasource user="app" password="{s}" url="jdbc:postgresql://db/app"/>'),
    ("password in XML element", _password, "<settings><servers><server><id>nexus</id><password>{s}</password></server></servers></settings>"),
    ("password in NuGet config", _password, '<packageSourceCredentials><feed><add key="ClearTextPassword" value="{s}" /></feed></packageSourceCredentials>'),
    ("password in Java properties", _password, "spring.datasource.password={s}"),
    ("password in PHP config", _password, "$db['default']['password'] = '{s}';"),
    ("password in Python dict", _password, "DATABASES = {{'default': {{'USER': 'app', 'PASSWORD': '{s}'}}}}"),
    ("password in WordPress config", _password, "define( 'DB_PASSWORD', '{s}' );"),
    ("password in Ruby hash", _password, "config.smtp_settings = {{ user_name: 'app', password: '{s}' }}"),
    ("password in Gradle", _password, "credentials {{\n    username 'deploy'\n    password '{s}'\n}}"),
    ("password in .netrc", _password, "machine api.example.com\n  login deploy\n  password {s}\n"),
    ("password in ODBC string", _password, "Driver={{ODBC Driver 18 for SQL Server}};Server=db;Uid=sa;Pwd={s};"),
    ("password in ADO.NET string", _password, "Server=tcp:db.example.com,1433;User ID=app;Password={s};Encrypt=True"),
    ("password in PostgreSQL URL", _password, "DATABASE_URL=postgres://app:{s}@db.internal:5432/app"),
    ("password in MongoDB URL", _password, "mongodb+srv://admin:{s}@cluster0.example.mongodb.net/?retryWrites=true"),
    ("password in Redis URL", _password, "REDIS_URL=redis://default:{s}@cache:6379/0"),
    ("password in JDBC query", _password, "jdbc:mysql://db:3306/app?user=app&password={s}&useSSL=true"),
    ("password in code call", _password, 'conn = psycopg2.connect(host="db", user="app", password="{s}")'),
    ("password in Java setter", _password, 'dataSource.setPassword("{s}");'),
    ("password in NetworkCredential", _password, 'var cred = new NetworkCredential("svc_sql", "{s}", "CORP");'),
    ("password in PowerShell", _password, '$secure = ConvertTo-SecureString "{s}" -AsPlainText -Force'),
    ("password flag", _password, "mysqldump --user=root --password={s} app > app.sql"),
    ("mysql -p", _password, "mysql -h db -u root -p{s} app"),
    ("sshpass -p", _password, "sshpass -p '{s}' ssh admin@10.0.0.8"),
    ("curl -u", _password, "curl -u admin:{s} https://jenkins.example.com/api/json"),
    ("PsExec -p", _password, "PsExec.exe \\\\dc01 -u CORP\\admin -p {s} cmd.exe"),
    ("docker login -p", _password, "docker login -u deploy -p {s} ghcr.io"),
    ("keytool -storepass", _password, "keytool -list -keystore app.jks -storepass {s}"),
    ("redis-cli -a", _password, "redis-cli -h cache.internal -a {s} INFO"),
    ("LDAP bind -w", _password, 'ldapsearch -x -D "cn=admin,dc=example,dc=org" -w {s} -b dc=example,dc=org'),
    ("net user", _password, "net user svc_sql {s} /add /domain"),
    ("SQL IDENTIFIED BY", _password, "CREATE USER 'report'@'%' IDENTIFIED BY '{s}';"),
    ("client secret in YAML", parts((ALNUM, 40)), "oauth:\n  client_id: app\n  client_secret: {s}\n"),
    ("API key in JSON", parts((ALNUM, 32)), '{{"service": "billing", "api_key": "{s}"}}'),
    ("token in env", parts((ALNUM, 40)), "SERVICE_TOKEN={s}"),
    ("private key in JSON", parts((B64, 256)), '{{"type": "service_account", "private_key": "-----BEGIN PRIVATE KEY-----\\n{s}\\n-----END PRIVATE KEY-----\\n"}}'),
    ("PEM RSA key", _pem, "-----BEGIN RSA PRIVATE KEY-----\n{s}\n-----END RSA PRIVATE KEY-----\n"),
    ("OpenSSH private key", _pem, "-----BEGIN OPENSSH PRIVATE KEY-----\n{s}\n-----END OPENSSH PRIVATE KEY-----\n"),
    ("Basic authorization header", lambda rng: base64.b64encode(f"admin:{_password(rng)}".encode()).decode(),
     "Authorization: Basic {s}"),
    ("bcrypt hash", _crypt_bcrypt, "admin:{s}"),
    ("sha512crypt hash", _crypt_sha512, "root:{s}:19800:0:99999:7:::"),
    ("sha256crypt hash", _crypt_sha256_rounds, "deploy:{s}:19800:0:99999:7:::"),
    ("yescrypt hash", _yescrypt, "alice:{s}:19900:0:99999:7:::"),
    ("md5crypt hash", _md5crypt, "user:{s}:18000:0:99999:7:::"),
    ("Argon2id hash", _argon2, '{{"user": "bob", "hash": "{s}"}}'),
    ("Django PBKDF2 hash", _django, "auth_user.password = {s}"),
    ("LDAP SSHA hash", _ssha, "userPassword: {s}"),
    ("Apache apr1 hash", _apr1, "ops:{s}"),
    ("Kerberos AS-REP hash", _asrep, "{s}"),
    ("NT hash in pwdump line", parts((HEX, 32)), "krbtgt:502:aad3b435b51404eeaad3b435b51404ee:{s}:::"),
    ("Slack webhook URL", parts("T", (UPPER_ALNUM, 10), "/B", (UPPER_ALNUM, 10), "/", (ALNUM, 24)),
     "SLACK_WEBHOOK=https://hooks.slack.com/services/{s}"),
    ("Discord webhook URL", parts((DIGITS, 18), "/", (B64URL, 68)), "https://discord.com/api/webhooks/{s}"),
    ("Teams webhook URL", lambda rng: f"{uuid(rng)}@{uuid(rng)}/IncomingWebhook/{draw(rng, HEX, 32)}/{uuid(rng)}",
     "https://contoso.webhook.office.com/webhookb2/{s}"),
    ("Okta SSWS header", parts("00", (B64URL, 40)), "curl -H 'Authorization: SSWS {s}' https://acme.okta.com/api/v1/users?limit=1"),
    ("Azure SAS signature", parts((B64, 43), "%3D"), "https://acct.blob.core.windows.net/c/b?sv=2022-11-02&sp=r&sig={s}"),
    ("JWT", lambda rng: ".".join(base64.urlsafe_b64encode(part).decode().rstrip("=") for part in (
        b'{"alg":"RS256","typ":"JWT"}', ('{"sub":"' + draw(rng, DIGITS, 10) + '","iss":"https://idp.example.com"}').encode(),
        bytes(rng.randrange(256) for _ in range(64)))), "Authorization: Bearer {s}"),
]


# Where a documented format starts with a public identifier, only the rest is secret: a Telegram bot token
# begins with the bot's own (public) user id, which the redactor keeps.
PUBLIC_FIRST_BODY = {"Telegram bot token"}


def _secret(gen: Gen, rng: random.Random) -> tuple[str, tuple[str, ...]]:
    made = gen(rng)
    return made if isinstance(made, tuple) else (made, (made,))


def _format_cases(rng: random.Random) -> list[HeldOut]:
    out = []
    for index, (family, gen, env, key, contexts) in enumerate(FORMATS):
        chosen = contexts or TOKEN_CONTEXTS
        for turn in range(3):
            template = chosen[(index + turn) % len(chosen)]
            secret, bodies = _secret(gen, rng)
            if family in PUBLIC_FIRST_BODY:
                bodies = bodies[1:]
            out.append(HeldOut(family, template.format(K=env, k=key, s=secret), secret, bodies))
    return out


def _syntax_cases(rng: random.Random) -> list[HeldOut]:
    out = []
    for family, gen, template in SYNTAX:
        for _ in range(2):
            secret, bodies = _secret(gen, rng)
            out.append(HeldOut(family, template.format(s=secret), secret, bodies))
    return out


def cases(seed: int = 0) -> list[HeldOut]:
    """Every held-out case, drawn from a generator seeded by `seed`."""
    rng = random.Random(f"heldout:{seed}")
    return _format_cases(rng) + _syntax_cases(rng)


def survives(case: HeldOut, output: str) -> bool:
    """Whether any SURVIVOR_WINDOW-long run of a drawn body of `case` is still in `output`.

    Bodies shorter than the window (a Mailchimp data-centre number, a salt's two digits) are not secrets on
    their own and occur elsewhere by chance; every case has at least one body of the window's length.
    """
    output = _PLACEHOLDER.sub("\x00", output)
    return any(body[i : i + SURVIVOR_WINDOW] in output
               for body in case.bodies if len(body) >= SURVIVOR_WINDOW
               for i in range(len(body) - SURVIVOR_WINDOW + 1))
