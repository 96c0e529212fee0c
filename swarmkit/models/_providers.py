"""Who serves a model, as the GenAI semantic conventions name it (``gen_ai.provider.name``)."""

from __future__ import annotations

from urllib.parse import urlsplit

UNKNOWN_PROVIDER = "_OTHER"
"""The provider of a model that declares none. The attribute is Required on GenAI spans and
its values are an open set: a known provider MUST use its listed value, any other may use a
value of its own; ``_OTHER`` is the conventions' spelling for "none of the listed ones"."""

OPENAI = "openai"
"""OpenAI, and the telemetry flavour of any server that speaks its API and is not listed."""

# Hosts of OpenAI-compatible endpoints that the conventions list a provider value for; a host
# matches itself or any subdomain (Azure and Bedrock put a resource or region in front).
_HOSTS: tuple[tuple[str, str], ...] = (
    ("api.openai.com", OPENAI),
    ("openai.azure.com", "azure.ai.openai"),
    ("services.ai.azure.com", "azure.ai.inference"),
    ("models.inference.ai.azure.com", "azure.ai.inference"),
    ("models.ai.azure.com", "azure.ai.inference"),
    ("generativelanguage.googleapis.com", "gcp.gemini"),
    ("aiplatform.googleapis.com", "gcp.vertex_ai"),
    ("api.anthropic.com", "anthropic"),
    ("amazonaws.com", "aws.bedrock"),
    ("api.cohere.ai", "cohere"),
    ("api.cohere.com", "cohere"),
    ("api.deepseek.com", "deepseek"),
    ("api.groq.com", "groq"),
    ("api.mistral.ai", "mistral_ai"),
    ("api.perplexity.ai", "perplexity"),
    ("api.x.ai", "x_ai"),
)


def provider_for_url(base_url: str | None) -> str:
    """The provider value for an OpenAI-compatible endpoint: the listed provider whose host
    serves ``base_url``, else ``openai`` (the API it speaks; ``None`` is OpenAI's own)."""
    if not base_url:
        return OPENAI
    host = (urlsplit(base_url if "//" in base_url else "//" + base_url).hostname or "").lower()
    for suffix, provider in _HOSTS:
        if host == suffix or host.endswith("." + suffix):
            return provider
    return OPENAI


def server_for_url(url: str | None) -> tuple[str, int] | None:
    """Where an API at ``url`` is reached: its host and port (the scheme's default when the URL
    names none); None without a URL or a host."""
    if not url:
        return None
    parts = urlsplit(url if "//" in url else "//" + url)
    host = parts.hostname
    if not host:
        return None
    try:
        port = parts.port
    except ValueError:
        return None
    return host, port if port is not None else (80 if parts.scheme == "http" else 443)


def server_of(model: object) -> tuple[str, int] | None:
    """The (host, port) a model declares as its ``server``, else None."""
    declared = getattr(model, "server", None)
    if isinstance(declared, tuple) and len(declared) == 2:
        return declared
    return None


def provider_of(model: object) -> str:
    """The provider a model declares (its ``provider`` text), else ``UNKNOWN_PROVIDER``."""
    declared = getattr(model, "provider", None)
    return declared if isinstance(declared, str) and declared else UNKNOWN_PROVIDER
