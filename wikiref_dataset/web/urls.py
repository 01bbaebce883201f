"""URL normalization for cited pages: one key per page, so that a citation finds its archived capture.

A Wikipedia citation, a Common Crawl capture and a Wayback Machine snapshot of one page rarely spell its URL the
same way (``HTTP://WWW.Example.com:80/a/?utm_source=x#top`` vs ``http://example.com/a``). :func:`normalize_url`
maps all spellings of a page to one URL; :func:`url_key` drops the scheme on top of that, because the archive
index treats the ``http`` and ``https`` captures of a page as the same page (as CDX/SURT keys do).

Rules of :func:`normalize_url`, applied in this order (the result is a fixed point: normalizing twice changes
nothing):

1. surrounding whitespace and ``<...>`` (a wget WARC bug) are removed; a URL without a scheme
   (``www.example.com/a``, ``//example.com/a``) gets ``http://``;
2. a Wayback Machine URL ``web.archive.org/web/<timestamp>[modifier_]/<url>`` becomes ``<url>``
   (:func:`unwrap_wayback`, repeated while the result is still a Wayback URL);
3. scheme and host are lowercased, the host is IDNA-encoded (``bücher.de`` -> ``xn--bcher-kva.de``), a trailing
   dot and user name/password are dropped, ``www.`` prefixes are removed (``www.example.com`` ->
   ``example.com``; a bare ``www.com`` stays), and the default port (80 for http, 443 for https) is dropped;
4. the path gets its dot segments resolved (``/a/./b/../c`` -> ``/a/c``), percent-escapes normalized (escapes
   of unreserved characters decoded, other escapes uppercased, spaces and non-ASCII characters encoded as UTF-8
   escapes) and its trailing slash removed (``/a/b/`` -> ``/a/b``; the root stays ``/``);
5. query parameters that only track visits (``utm_*``, ``fbclid``, ``gclid``, ... :data:`TRACKING_PARAMETERS`)
   are dropped, the others sorted, and an empty query removed;
6. the fragment is dropped.

Hand-written rather than taken from ``courlan``/``w3lib``: their canonicalizers keep ``www.`` and trailing
slashes and do not unwrap Wayback URLs, and the project needs a documented, idempotent key (tested as a
property) that both the archive index and the document dedup share.
"""

from __future__ import annotations

import posixpath
import re
from urllib.parse import urlsplit, urlunsplit

__all__ = ["TRACKING_PARAMETERS", "normalize_url", "unwrap_wayback", "url_key", "wayback_raw_url"]

TRACKING_PARAMETERS: frozenset[str] = frozenset(
    {
        "fbclid", "gclid", "gclsrc", "dclid", "gbraid", "wbraid", "msclkid", "yclid", "igshid", "twclid",
        "mc_cid", "mc_eid", "_ga", "_gl", "_hsenc", "_hsmi", "mkt_tok", "wt.mc_id", "wt.mc_ev", "ocid",
        "oly_anon_id", "oly_enc_id", "vero_conv", "vero_id", "__twitter_impression", "rb_clickid", "s_kwcid",
    }
)  # fmt: skip
"""Query parameter names (lowercase) that identify a visit, not a page; every ``utm_*`` parameter is dropped too."""

_DEFAULT_PORTS = {"http": 80, "https": 443}
_WAYBACK_HOSTS = ("web.archive.org", "wayback.archive.org", "web-beta.archive.org")
# /web/<timestamp><modifier>/<url>: timestamp of 1-14 digits (or a `*` listing), optional modifier (id_, if_, ...)
_WAYBACK_PATH = re.compile(r"^/web/(?:\d{1,14}(?:[a-z]{2}_)?|\*|\d*\*)/(?P<url>.*)$", re.DOTALL)
_SCHEME = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*:")
_ESCAPE = re.compile(r"%([0-9A-Fa-f]{2})")
_UNRESERVED = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
# characters kept as they are in a path / a query component (RFC 3986 pchar, plus "/" and "?" where allowed)
_PATH_SAFE = frozenset("!$&'()*+,;=:@/") | _UNRESERVED
_QUERY_SAFE = frozenset("!$'()*+,;:@/?=") | _UNRESERVED  # "&" and "=" split parameters; "=" kept in values


def _add_scheme(url: str) -> str:
    if url.startswith("//"):
        return "http:" + url
    if not _SCHEME.match(url) or re.match(r"^[^/?#:]+:\d+(?:[/?#]|$)", url):
        # "example.com/a" or "example.com:8080/a" (the latter parses as scheme "example.com")
        return "http://" + url
    return url


def unwrap_wayback(url: str) -> str:
    """The original URL of a Wayback Machine snapshot URL, or `url` unchanged when it is not one.

    `https://web.archive.org/web/20200101000000/http://example.com/a?b=1` -> `http://example.com/a?b=1`; the
    `id_`/`if_`/... modifiers and `*` listings are understood, a missing scheme becomes `http://`, and a scheme
    whose `//` was collapsed by a proxy (`http:/example.com`) is repaired. Only one level is unwrapped.
    """
    if "archive.org" not in url.lower():  # fast path: most URLs are not snapshots
        return url
    stripped = url.strip()
    try:
        parts = urlsplit(_add_scheme(stripped))
    except ValueError:
        return url
    if (parts.hostname or "") not in _WAYBACK_HOSTS:
        return url
    # take the raw text after /web/<ts>/: the inner URL's own query and fragment belong to it
    raw = stripped.split("://", 1)[-1]
    path_and_rest = raw[raw.find("/") :] if "/" in raw else ""
    match = _WAYBACK_PATH.match(path_and_rest)
    if not match or not match.group("url"):
        return url
    inner = match.group("url")
    inner = re.sub(r"^([a-zA-Z][a-zA-Z0-9+.-]*):/(?!/)", r"\1://", inner)
    return _add_scheme(inner)


def wayback_raw_url(url: str) -> str:
    """For a Wayback snapshot URL, the URL of the archived bytes without the Wayback toolbar (`<ts>id_`).

    Other URLs are returned unchanged. Used when a dead citation is downloaded from its archive copy.
    """
    match = re.match(r"^(?P<head>\s*(?:https?:)?//(?:web|wayback|web-beta)\.archive\.org/web/)(?P<ts>\d{1,14})"
                     r"(?:[a-z]{2}_)?/(?P<rest>.+)$", url, re.IGNORECASE | re.DOTALL)
    if not match:
        return url
    return f"{match.group('head')}{match.group('ts')}id_/{match.group('rest')}"


def _normalize_escapes(text: str, safe: frozenset[str]) -> str:
    """Decode escapes of unreserved characters, uppercase the others, escape what is not `safe`."""
    out = []
    i = 0
    while i < len(text):
        char = text[i]
        if char == "%":
            match = _ESCAPE.match(text, i)
            if match:
                decoded = chr(int(match.group(1), 16))
                out.append(decoded if decoded in _UNRESERVED else "%" + match.group(1).upper())
                i += 3
                continue
            out.append("%25")  # a lone "%" is a literal percent sign
        elif char in safe:
            out.append(char)
        else:
            out.extend(f"%{byte:02X}" for byte in char.encode("utf-8", errors="surrogatepass"))
        i += 1
    return "".join(out)


def _normalize_host(host: str) -> str:
    host = host.strip().rstrip(".").lower()
    if host.startswith("[") and host.endswith("]"):
        return host  # IPv6 literal
    try:
        host = host.encode("idna").decode("ascii")
    except UnicodeError:
        host = _normalize_escapes(host, _UNRESERVED)  # not a valid IDN: keep it, escaped, as a key
    while host.startswith("www.") and host.count(".") >= 2:
        host = host[4:]
    return host


def _normalize_path(path: str) -> str:
    if not path:
        return "/"
    path = _normalize_escapes(path, _PATH_SAFE)
    if not path.startswith("/"):
        path = "/" + path
    normalized = posixpath.normpath(path)
    if normalized.startswith("//"):  # normpath keeps a leading "//" (POSIX); a URL path does not need it
        normalized = "/" + normalized.lstrip("/")
    return normalized if normalized != "." else "/"


def _normalize_query(query: str, tracking: frozenset[str]) -> str:
    kept = []
    for parameter in query.split("&"):
        if not parameter:
            continue
        parameter = _normalize_escapes(parameter, _QUERY_SAFE | {"="})
        name = parameter.split("=", 1)[0].lower()
        if name.startswith("utm_") or name in tracking:
            continue
        kept.append(parameter)
    return "&".join(sorted(kept))


def normalize_url(url: str, tracking_parameters: frozenset[str] = TRACKING_PARAMETERS) -> str:
    """The normalized form of `url` (rules in the module docstring); idempotent.

    Raises:
        ValueError: `url` is not a string, is empty, or has no host (e.g. `"http://"`, `"mailto:x@y"`).
    """
    if not isinstance(url, str):
        raise ValueError(f"URL must be a string, got {type(url).__name__}")
    text = url.strip()
    if text.startswith("<") and text.endswith(">"):
        text = text[1:-1].strip()
    if not text:
        raise ValueError("empty URL")
    text = _add_scheme(text)
    for _ in range(10):  # nested snapshots (an archive of an archive): bounded
        unwrapped = unwrap_wayback(text)
        if unwrapped == text:
            break
        text = unwrapped
    try:
        parts = urlsplit(text)
        port = parts.port
    except ValueError as error:
        raise ValueError(f"{url!r}: not a valid URL ({error})") from None
    scheme = parts.scheme.lower()
    host = parts.hostname or ""
    if "[" in parts.netloc and ":" in host:
        host = f"[{host}]"
    host = _normalize_host(host)
    if not host:
        raise ValueError(f"{url!r}: URL has no host")
    netloc = host if port is None or _DEFAULT_PORTS.get(scheme) == port else f"{host}:{port}"
    path = _normalize_path(parts.path)
    if len(path) > 1 and path.endswith("/"):
        path = path.rstrip("/") or "/"
    query = _normalize_query(parts.query, tracking_parameters)
    return urlunsplit((scheme, netloc, path, query, ""))


def url_key(url: str) -> str:
    """The archive lookup key of `url`: its normalized form without the scheme (`example.com/a?b=1`).

    `http://` and `https://` captures of a page share a key, as in CDX indexes.

    Raises:
        ValueError: as :func:`normalize_url`.
    """
    return normalize_url(url).split("://", 1)[1]
