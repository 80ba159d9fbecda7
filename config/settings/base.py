"""Settings for every environment, read from the process environment by django-environ.

With no variable set the platform runs on its embedded default (0-conventions.md section 1):
SQLite under var/, in-process cache and channel layer, and Celery on a filesystem broker
under var/ with a real worker and beat. Setting DATABASE_URL, REDIS_URL and
CELERY_BROKER_URL moves it onto PostgreSQL, Redis and a real broker.
"""

from __future__ import annotations

import os
import secrets
from pathlib import Path

import environ
from cryptography.fernet import Fernet

BASE_DIR = Path(__file__).resolve().parent.parent.parent
# One BLAS thread per process (the local embedding model's matrix products): web and worker
# processes already take one core each, and a thread per core in each of them measured
# 2-3x slower under load. Read by numpy's OpenBLAS when it is first imported.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
VAR_DIR = Path(environ.Env().str("VAR_DIR", default=str(BASE_DIR / "var")))
VAR_DIR.mkdir(parents=True, exist_ok=True)

env = environ.Env(
    DEBUG=(bool, False),
    ALLOW_PRIVATE_WEBHOOK_TARGETS=(bool, False),
)


def _generated_secret(name: str, make) -> str:
    """A development secret generated once into var/ so restarts keep sessions and keys."""
    path = VAR_DIR / f".{name.lower()}"
    if not path.exists():
        path.write_text(make())
        path.chmod(0o600)
    return path.read_text().strip()


DEBUG = env("DEBUG")
_EMBEDDED = not env.str("DATABASE_URL", default="")

SECRET_KEY = env.str("SECRET_KEY", default="") or _generated_secret(
    "SECRET_KEY", lambda: secrets.token_urlsafe(50)
)
# Comma-separated Fernet keys; the first encrypts, all decrypt (rotation).
FIELD_ENCRYPTION_KEYS = env.list("FIELD_ENCRYPTION_KEY", default=[]) or [
    _generated_secret("FIELD_ENCRYPTION_KEY", lambda: Fernet.generate_key().decode())
]

ALLOWED_HOSTS = env.list("ALLOWED_HOSTS", default=["*"])
CSRF_TRUSTED_ORIGINS = env.list("CSRF_TRUSTED_ORIGINS", default=[])
# Public base address of the platform, used in signed file URLs, SAML and short links.
PUBLIC_BASE_URL = env.str("PUBLIC_BASE_URL", default="http://localhost:8000").rstrip("/")
# {docs_url} of Document 1: meta.docs_url is {DOCS_URL}/errors/<CODE>.
DOCS_URL = env.str("DOCS_URL", default=PUBLIC_BASE_URL).rstrip("/")
# djangosaml2 builds one service provider per organization from its SAML settings.
SAML_CONFIG_LOADER = "platform_core.sso.saml.config_loader"
# Our SAML views answer through DRF, not djangosaml2's CSP-decorated dispatch: no CSP hook.
SAML_CSP_HANDLER = ""
# AuthnRequests go by HTTP-Redirect (the binding every configured IdP is described with).
SAML_DEFAULT_BINDING = "urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Redirect"
# django-scim2 serves /scim/v2/{orgSlug}/ through the organization-aware hooks of
# platform_core/sso/scim (token auth, tenancy filter, adapters, filter parsers).
SCIM_SERVICE_PROVIDER = {
    "NETLOC": PUBLIC_BASE_URL.split("://", 1)[-1],
    "AUTHENTICATION_SCHEMES": [{"type": "oauthbearertoken", "name": "OAuth Bearer Token"}],
    "WWW_AUTHENTICATE_HEADER": 'Bearer realm="scim"',
    "USER_MODEL_GETTER": "platform_core.sso.scim.filters.scim_user_model",
    "GROUP_MODEL": "platform_core.sso.models.ScimGroup",
    "USER_ADAPTER": "platform_core.sso.scim.adapters.UserAdapter",
    "GROUP_ADAPTER": "platform_core.sso.scim.adapters.GroupAdapter",
    "USER_FILTER_PARSER": "platform_core.sso.scim.filters.UserFilterQuery",
    "GROUP_FILTER_PARSER": "platform_core.sso.scim.filters.GroupFilterQuery",
    "AUTH_CHECK_MIDDLEWARE": "platform_core.sso.scim.hooks.ScimTokenAuthMiddleware",
    "BASE_LOCATION_GETTER": "platform_core.sso.scim.hooks.base_location",
    "GET_EXTRA_MODEL_FILTER_KWARGS_GETTER": "platform_core.sso.scim.hooks.extra_filter_kwargs_getter",
    "GET_QUERYSET_POST_PROCESSOR_GETTER": "platform_core.sso.scim.hooks.queryset_post_processor_getter",
    "GET_OBJECT_POST_PROCESSOR_GETTER": "platform_core.sso.scim.hooks.object_post_processor_getter",
    "SERVICE_PROVIDER_CONFIG_MODEL": "platform_core.sso.scim.hooks.ServiceProviderConfig",
}
# Trust X-Forwarded-For from the reverse proxy for the client address (IP allowlists, audit).
TRUST_X_FORWARDED_FOR = env.bool("TRUST_X_FORWARDED_FOR", default=False)

INSTALLED_APPS = [
    "daphne",
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "rest_framework",
    "drf_spectacular",
    "channels",
    "platform_core",
    "platform_core.files.apps.FilesConfig",
    "platform_core.events.apps.EventsConfig",
    "platform_core.webhooks.apps.WebhooksConfig",
    "platform_core.accounts.apps.AccountsConfig",
    "platform_core.sso.apps.SsoConfig",
    "messaging",
    "contacts",
    "contacts.segments.apps.SegmentsConfig",
    "messaging.links.apps.LinksConfig",
    "messaging.providers.apps.ProvidersConfig",
    "messaging.numbers.apps.NumbersConfig",
    "messaging.numbers.network.apps.NetworkApisConfig",
    "messaging.verify.apps.VerifyConfig",
    "messaging.whatsapp.apps.WhatsAppConfig",
    "messaging.rcs.apps.RcsConfig",
    "conversations",
    "conversations.team_chat.apps.TeamChatConfig",
    "agents",
    "knowledge",
    "insights",
    "loyalty",
    "recordings",
    "ads",
    "voice",
    "templates.apps.MessageTemplatesConfig",
    "django_htmx",
    "dashboard",
]

MIDDLEWARE = [
    "platform_core.api.middleware.RequestIdMiddleware",
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "platform_core.api.csrf.ConsoleCsrfViewMiddleware",  # the admin console only
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
]

ROOT_URLCONF = "config.urls"
WSGI_APPLICATION = "config.wsgi.application"
ASGI_APPLICATION = "config.asgi.application"
APPEND_SLASH = False

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "dashboard.context.frame",
            ],
        },
    },
]

# --- Data stores -----------------------------------------------------------------------
DATABASES = {"default": env.db("DATABASE_URL", default=f"sqlite:///{VAR_DIR / 'platform.sqlite3'}")}
DATABASES["default"]["ATOMIC_REQUESTS"] = False
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # The embedded default has several writers (web, worker threads, beat): transactions take
    # the write lock when they begin (no lock-upgrade deadlock answering "database is
    # locked" at once), wait up to 20 s for it, and WAL lets readers run beside the writer.
    DATABASES["default"].setdefault("OPTIONS", {}).update({
        "transaction_mode": "IMMEDIATE",
        "timeout": 20,
        "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
    })
if DATABASES["default"]["ENGINE"] == "django.db.backends.postgresql":
    DATABASES["default"].setdefault("CONN_MAX_AGE", env.int("DB_CONN_MAX_AGE", default=60))
    # No per-request `SELECT 1`: a broken pooled connection fails one request and is replaced.
    DATABASES["default"]["CONN_HEALTH_CHECKS"] = env.bool("DB_CONN_HEALTH_CHECKS", default=False)
    # Server-side parameter binding, and statements a connection repeats prepared after
    # DB_PREPARE_THRESHOLD runs (PostgreSQL then skips parsing and planning them). Behind a
    # transaction-pooling PgBouncer set DB_PREPARE_THRESHOLD=0 (no prepared statements).
    if env.bool("DB_SERVER_SIDE_BINDING", default=True):
        DATABASES["default"].setdefault("OPTIONS", {})["server_side_binding"] = True
    _prepare_threshold = env.int("DB_PREPARE_THRESHOLD", default=5)
    DATABASES["default"].setdefault("OPTIONS", {})["prepare_threshold"] = (
        _prepare_threshold or None)
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"
# Read replica: DATABASE_REPLICA_URL adds the `replica` alias; the router sends the insights
# reads there (insights/db.py); every write and every other read stays on `default`.
DATABASE_REPLICA_ALIAS = None
if env.str("DATABASE_REPLICA_URL", default=""):
    DATABASES["replica"] = {**DATABASES["default"], **env.db("DATABASE_REPLICA_URL")}
    DATABASE_REPLICA_ALIAS = "replica"
DATABASE_ROUTERS = ["insights.db.ReplicaRouter"]

REDIS_URL = env.str("REDIS_URL", default="")
CACHE_KEY_PREFIX = env.str("CACHE_KEY_PREFIX", default="engage")
if REDIS_URL:
    CACHES = {
        "default": {
            "BACKEND": "django_redis.cache.RedisCache",
            "LOCATION": REDIS_URL,
            "KEY_PREFIX": CACHE_KEY_PREFIX,
            "OPTIONS": {
                "CLIENT_CLASS": "django_redis.client.DefaultClient",
                "SOCKET_CONNECT_TIMEOUT": 1,
                "SOCKET_TIMEOUT": 1,
            },
        }
    }
    CHANNEL_LAYERS = {
        "default": {
            "BACKEND": "channels_redis.core.RedisChannelLayer",
            "CONFIG": {"hosts": [REDIS_URL], "prefix": f"{CACHE_KEY_PREFIX}:ch"},
        },
        # Team chat's live updates: one PUBLISH per channel group however many members.
        "team_chat": {
            "BACKEND": "channels_redis.pubsub.RedisPubSubChannelLayer",
            "CONFIG": {"hosts": [REDIS_URL], "prefix": f"{CACHE_KEY_PREFIX}:tc"},
        },
    }
else:
    CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.locmem.LocMemCache",
            "KEY_PREFIX": CACHE_KEY_PREFIX,
        }
    }
    CHANNEL_LAYERS = {"default": {"BACKEND": "channels.layers.InMemoryChannelLayer"},
                      "team_chat": {"BACKEND": "channels.layers.InMemoryChannelLayer"}}
# Team-chat huddles: a LiveKit-compatible media server (unset: huddles answer 503).
TEAM_CHAT_MEDIA_URL = env.str("TEAM_CHAT_MEDIA_URL", default="")
TEAM_CHAT_MEDIA_API_KEY = env.str("TEAM_CHAT_MEDIA_API_KEY", default="")
TEAM_CHAT_MEDIA_API_SECRET = env.str("TEAM_CHAT_MEDIA_API_SECRET", default="")

# --- Celery ----------------------------------------------------------------------------
# Embedded default: a filesystem broker under var/ so a real worker and beat run with no
# services (retries and schedules behave as in production; nothing runs eagerly).
_BROKER_DIR = VAR_DIR / "broker"
# (`localhost`: the filesystem transport ignores it, kombu warns when there is none.)
CELERY_BROKER_URL = env.str("CELERY_BROKER_URL", default="filesystem://localhost//")
if CELERY_BROKER_URL.startswith("filesystem://"):
    for sub in ("in", "processed", "control"):
        (_BROKER_DIR / sub).mkdir(parents=True, exist_ok=True)
    CELERY_BROKER_TRANSPORT_OPTIONS = {
        "data_folder_in": str(_BROKER_DIR / "in"),
        "data_folder_out": str(_BROKER_DIR / "in"),
        "processed_folder": str(_BROKER_DIR / "processed"),
        "control_folder": str(_BROKER_DIR / "control"),
        "store_processed": False,
        # kombu polls the folder once a second by default: each hop of a task chain (send,
        # fan-out, delivery) would wait for it. 50 ms keeps `make run` prompt for a few
        # directory listings a second per queue.
        "polling_interval": env.float("FILESYSTEM_BROKER_POLL_SECONDS", default=0.05),
    }
CELERY_TASK_ALWAYS_EAGER = env.bool("CELERY_TASK_ALWAYS_EAGER", default=False)
CELERY_TASK_EAGER_PROPAGATES = True
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_IGNORE_RESULT = True
# One queue per family (config/queues.py); a task it does not route runs on `default`.
from config.queues import ROUTES  # noqa: E402

CELERY_TASK_DEFAULT_QUEUE = "default"
CELERY_TASK_ROUTES = ROUTES
# Celery's Django fixup closes the database connection around every task unless told to
# reuse it; a reconnect costs ~20 ms, more than a webhook delivery itself.
CELERY_DB_REUSE_MAX = env.int("CELERY_DB_REUSE_MAX", default=1000)
CELERY_BEAT_SCHEDULE_FILENAME = str(VAR_DIR / "celerybeat-schedule")
CELERY_TIMEZONE = "UTC"
# Periodic jobs: config/beat.py lists them.
from config.beat import BEAT_SCHEDULE  # noqa: E402

CELERY_BEAT_SCHEDULE = BEAT_SCHEDULE

# --- Auth ------------------------------------------------------------------------------
AUTH_USER_MODEL = "platform_core.User"
AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {
        "NAME": "django.contrib.auth.password_validation.MinimumLengthValidator",
        "OPTIONS": {"min_length": 10},
    },
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]
SESSION_TOKEN_TTL_SECONDS = env.int("SESSION_TOKEN_TTL_SECONDS", default=12 * 3600)
# The dashboard's session cookie (platform_core/identity/dashboard_cookie.py) is Secure
# except on the embedded default, which serves plain HTTP on 127.0.0.1.
DASHBOARD_COOKIE_SECURE = env.bool("DASHBOARD_COOKIE_SECURE", default=not (DEBUG or _EMBEDDED))
# Sign-in lockout (dashboard and API login): this many wrong passwords for one email address
# from one client address lock that pair's password sign-in until the window passes.
LOGIN_LOCKOUT_ATTEMPTS = env.int("LOGIN_LOCKOUT_ATTEMPTS", default=10)
LOGIN_LOCKOUT_SECONDS = env.int("LOGIN_LOCKOUT_SECONDS", default=15 * 60)
# The terms and privacy policy versions a dashboard member accepts before going on.
DASHBOARD_TERMS_VERSION = env.str("DASHBOARD_TERMS_VERSION", default="2026-01")
DASHBOARD_PRIVACY_VERSION = env.str("DASHBOARD_PRIVACY_VERSION", default="2026-01")
# Header carrying the internal service-to-service token (Document 1, 5 rule 7).
INTERNAL_SERVICE_TOKEN = env.str("INTERNAL_SERVICE_TOKEN", default="")

# --- API -------------------------------------------------------------------------------
REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": ["platform_core.api.authentication.PlatformAuthentication"],
    "DEFAULT_PERMISSION_CLASSES": ["platform_core.api.permissions.DeclaredScopes"],
    "DEFAULT_RENDERER_CLASSES": ["platform_core.api.renderers.EnvelopeJSONRenderer"],
    "DEFAULT_PARSER_CLASSES": [
        "rest_framework.parsers.JSONParser",
        "rest_framework.parsers.FormParser",
        "rest_framework.parsers.MultiPartParser",
    ],
    "DEFAULT_THROTTLE_CLASSES": [],
    "EXCEPTION_HANDLER": "platform_core.api.exceptions.exception_handler",
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "UNAUTHENTICATED_USER": None,
    "DEFAULT_VERSIONING_CLASS": None,
}
# Requests per minute per credential for the standard buckets.
RATE_LIMIT_READ_PER_MINUTE = env.int("RATE_LIMIT_READ_PER_MINUTE", default=1200)
RATE_LIMIT_WRITE_PER_MINUTE = env.int("RATE_LIMIT_WRITE_PER_MINUTE", default=300)
IDEMPOTENCY_TTL_SECONDS = 24 * 3600

SPECTACULAR_SETTINGS = {
    "TITLE": "Engage Platform API",
    "DESCRIPTION": (
        "Multi-tenant communications and customer-engagement API. Every success body is "
        "`{data, meta}`, every error body `{error, meta}`."
    ),
    "VERSION": "1.0.0",
    "SERVE_INCLUDE_SCHEMA": False,
    "SCHEMA_PATH_PREFIX": r"/api/v1",
    "COMPONENT_SPLIT_REQUEST": True,
    "ENUM_NAME_OVERRIDES": {
        "RoleEnum": "platform_core.tenancy.models.Role",
        "ChannelEnum": "messaging.models.Channel",
        "ConversationChannelEnum": "conversations.models.CHANNELS",
        "MessageStatusEnum": "messaging.models.MessageStatus",
        "ConversationStatusEnum": "conversations.models.ConversationStatus",
        "ChannelRoleEnum": "conversations.team_chat.models.ChannelRole",
        "DeliveryStatusEnum": "platform_core.webhooks.models.DeliveryStatus",
        "RecordingKindEnum": "recordings.models.RecordingKind",
        "AdChannelEnum": "ads.models.CampaignChannel",
        "AudienceSyncModeEnum": "ads.models.SyncMode",
        "ModeEnum": "platform_core.identity.models.KeyMode",
        "ApiKeyTypeEnum": "platform_core.identity.models.KeyType",
        "RoutingAvailabilityEnum": "conversations.routing_models.Availability",
        "RcsUseCaseEnum": "messaging.rcs.models.UseCase",
        "AgentTypeEnum": "agents.api.serializers.AGENT_TYPES",
        "AgentChannelEnum": "agents.api.serializers.CHANNELS",
    },
    "POSTPROCESSING_HOOKS": [
        "drf_spectacular.hooks.postprocess_schema_enums",
        "platform_core.api.schema.wrap_in_envelope",
    ],
}

# --- Files -----------------------------------------------------------------------------
MEDIA_ROOT = env.str("MEDIA_ROOT", default=str(VAR_DIR / "media"))
FILE_UPLOAD_MAX_BYTES = 25 * 1024 * 1024
DATA_UPLOAD_MAX_MEMORY_SIZE = env.int("DATA_UPLOAD_MAX_MEMORY_SIZE", default=2 * 1024 * 1024)
FILE_UPLOAD_MAX_MEMORY_SIZE = 2 * 1024 * 1024
AWS_STORAGE_BUCKET_NAME = env.str("AWS_STORAGE_BUCKET_NAME", default="")
STORAGES = {
    "default": {
        "BACKEND": (
            "storages.backends.s3.S3Storage"
            if AWS_STORAGE_BUCKET_NAME
            else "django.core.files.storage.FileSystemStorage"
        ),
    },
    "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
}
if AWS_STORAGE_BUCKET_NAME:
    AWS_S3_ENDPOINT_URL = env.str("AWS_S3_ENDPOINT_URL", default=None)
    AWS_DEFAULT_ACL = None
    AWS_QUERYSTRING_AUTH = True

STATIC_URL = "static/"
STATIC_ROOT = VAR_DIR / "static"
# WhiteNoise serves static files from the app server (gunicorn or daphne), found where the
# apps keep them (no collectstatic step for the embedded default and the tests); cached
# by the browser for a day.
WHITENOISE_USE_FINDERS = True
STATIC_ROOT.mkdir(parents=True, exist_ok=True)  # `collectstatic` fills it for production
WHITENOISE_MAX_AGE = 86400

# --- Webhooks and outbound HTTP ----------------------------------------------------------
ALLOW_PRIVATE_WEBHOOK_TARGETS = env("ALLOW_PRIVATE_WEBHOOK_TARGETS")
WEBHOOK_RETRY_SCHEDULE = env.list("WEBHOOK_RETRY_SCHEDULE", cast=int, default=[])
# Background-plane tuning, taken from the environment only when given: each family's
# conf.py (webhooks, messaging) holds the default and says what the knob does.
for _name, _cast in {
    "WEBHOOK_ENDPOINT_CONCURRENCY": int, "WEBHOOK_TIMEOUT_SECONDS": float,
    "OUTBOUND_HTTP_THREADS": int, "MESSAGING_SEND_BATCH_MAX": int,
    "MESSAGING_PROVIDER_CONCURRENCY": int, "MESSAGING_SANDBOX_RECEIPT_DELAY_SECONDS": float,
    "CONVERSATIONS_OFFER_TTL_SECONDS": int, "COBROWSE_ENABLED": bool,
}.items():
    if env.str(_name, default=""):
        globals()[_name] = env.get_value(_name, cast=_cast)

# --- Outside providers ---------------------------------------------------------------------
LLM_BASE_URL = env.str("LLM_BASE_URL", default="")
LLM_API_KEY = env.str("LLM_API_KEY", default="")
# The AI engine (docs/ai-engine.md): upstream model names, prices, the segment hooks.
LLM_MODEL = env.str("LLM_MODEL", default="")
LLM_EMBEDDING_MODEL = env.str("LLM_EMBEDDING_MODEL", default="")
AI_MODEL_PRICES = env.json("AI_MODEL_PRICES", default={})
AI_RATE_LIMIT_PER_MINUTE = env.int("AI_RATE_LIMIT_PER_MINUTE", default=120)
# Knowledge document versions keep their content up to this size (docs/knowledge.md).
KNOWLEDGE_VERSION_MAX_BYTES = env.int("KNOWLEDGE_VERSION_MAX_BYTES", default=1024 * 1024)
SEGMENTS_SUGGEST_ENGINE = "agents.engine.hooks.SegmentSuggestEngine"
SEGMENTS_AUTOPILOT_ENGINE = "agents.engine.hooks.SegmentAutopilotEngine"
EMAIL_URL = env.str("EMAIL_URL", default="")
if EMAIL_URL:
    vars().update(env.email_url("EMAIL_URL"))
DEFAULT_FROM_EMAIL = env.str("DEFAULT_FROM_EMAIL", default="no-reply@localhost")

# --- Locale ------------------------------------------------------------------------------
LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"plain": {"format": "%(asctime)s %(levelname)s %(name)s %(message)s"}},
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": "plain"}},
    "root": {"handlers": ["console"], "level": env.str("LOG_LEVEL", default="INFO")},
    # httpx logs every outbound URL at INFO; customers' URLs can carry tokens.
    "loggers": {"django.request": {"level": "ERROR"}, "httpx": {"level": "WARNING"},
                # openai 3.x sends through httpx2, which logs every outbound URL at INFO.
                "httpx2": {"level": "WARNING"}},
}

# Fail closed in production: an explicit DEBUG=false deployment on PostgreSQL must be given
# its secrets rather than silently generating development ones.
if not DEBUG and not _EMBEDDED and env.bool("REQUIRE_SECRETS", default=False):
    for required in ("SECRET_KEY", "FIELD_ENCRYPTION_KEY"):
        if not env.str(required, default=""):
            raise environ.ImproperlyConfigured(f"{required} must be set in production")
