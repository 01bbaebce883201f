"""Tests for wikiref_dataset.web.urls: the normalization rules, Wayback unwrapping, and idempotence (property)."""

from __future__ import annotations

import random

import pytest

from wikiref_dataset.web.urls import normalize_url, unwrap_wayback, url_key, wayback_raw_url


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("HTTP://WWW.Example.COM:80/a/b/?utm_source=x&utm_medium=y#top", "http://example.com/a/b"),
        ("https://example.com:443/", "https://example.com/"),
        ("https://example.com:8443/x", "https://example.com:8443/x"),
        ("http://example.com", "http://example.com/"),
        ("example.com/page", "http://example.com/page"),
        ("//example.com/page", "http://example.com/page"),
        ("localhost:8080/x", "http://localhost:8080/x"),
        ("  <http://example.com/x>  ", "http://example.com/x"),
        ("http://user:pw@www.example.com/x", "http://example.com/x"),
        ("http://example.com./x", "http://example.com/x"),
        ("http://www.www.example.com/", "http://example.com/"),
        ("http://www.com/", "http://www.com/"),
        ("http://example.com/a/./b/../c/", "http://example.com/a/c"),
        ("http://example.com/a//b", "http://example.com/a/b"),
        ("http://example.com/%7euser/%2fx%2F", "http://example.com/~user/%2Fx%2F"),
        ("http://example.com/a b/é", "http://example.com/a%20b/%C3%A9"),
        ("http://example.com/100%", "http://example.com/100%25"),
        ("http://example.com/?b=2&a=1&fbclid=z&gclid=q", "http://example.com/?a=1&b=2"),
        ("http://example.com/?utm_campaign=x", "http://example.com/"),
        ("http://example.com/?q=a+b&x=%7e", "http://example.com/?q=a+b&x=~"),
        ("http://bücher.de/Straße", "http://xn--bcher-kva.de/Stra%C3%9Fe"),
        ("http://[::1]:80/x", "http://[::1]/x"),
        ("https://web.archive.org/web/20200101000000/http://www.example.com/a/?utm_source=t",
         "http://example.com/a"),
        ("https://web.archive.org/web/20200101000000id_/https://example.com/a?b=1", "https://example.com/a?b=1"),
        ("http://web.archive.org/web/2015/example.com/a", "http://example.com/a"),
        ("web.archive.org/web/20160101000000*/http://example.com/x", "http://example.com/x"),
        ("https://web.archive.org/web/20200101000000/https://web.archive.org/web/2019/http://example.com/",
         "http://example.com/"),
    ],
)
def test_normalize_url_rules(url: str, expected: str) -> None:
    assert normalize_url(url) == expected


@pytest.mark.parametrize("url", ["", "   ", "http://", "mailto:someone@example.com", "http://example.com:99999/"])
def test_normalize_url_rejects(url: str) -> None:
    with pytest.raises(ValueError):
        normalize_url(url)


def test_unwrap_wayback() -> None:
    assert unwrap_wayback("https://web.archive.org/web/20200101000000/http://example.com/a?b=1#c") == (
        "http://example.com/a?b=1#c"
    )
    assert unwrap_wayback("https://web.archive.org/web/20200101im_/http:/example.com/img.png") == (
        "http://example.com/img.png"
    )
    assert unwrap_wayback("https://wayback.archive.org/web/2004/www.example.org/") == "http://www.example.org/"
    for not_wayback in ("http://example.com/web/2020/http://x.com/", "https://web.archive.org/details/foo", "x"):
        assert unwrap_wayback(not_wayback) == not_wayback


def test_wayback_raw_url() -> None:
    assert wayback_raw_url("https://web.archive.org/web/20200101000000/http://example.com/a") == (
        "https://web.archive.org/web/20200101000000id_/http://example.com/a"
    )
    assert wayback_raw_url("https://web.archive.org/web/20200101000000if_/http://example.com/a") == (
        "https://web.archive.org/web/20200101000000id_/http://example.com/a"
    )
    assert wayback_raw_url("http://example.com/a") == "http://example.com/a"


def test_url_key_ignores_scheme() -> None:
    assert url_key("https://www.example.com/a/") == url_key("http://example.com/a") == "example.com/a"


def _random_url(rng: random.Random) -> str:
    pieces = ["a", "B", "%7e", "%2F", "%", "%zz", " ", "é", "..", ".", "/", "//", "~", "+", "=", "&", "?", "#"]
    scheme = rng.choice(["http://", "HTTPS://", "", "//", "ftp://"])
    host = rng.choice(["www.Example.com", "example.com.", "WWW.www.a.org", "bücher.de", "[::1]", "10.0.0.1",
                       "www.com", "xn--bcher-kva.de", "a-b.c"])
    port = rng.choice(["", ":80", ":443", ":8080"])
    path = "/" + "".join(rng.choice(pieces) for _ in range(rng.randint(0, 8)))
    query = ""
    if rng.random() < 0.6:
        names = ["utm_source", "b", "A", "fbclid", "q", "x%20y", ""]
        query = "?" + "&".join(f"{rng.choice(names)}={rng.choice(pieces)}" for _ in range(rng.randint(0, 4)))
    fragment = rng.choice(["", "#frag", "#"])
    url = scheme + host + port + path + query + fragment
    if rng.random() < 0.2:
        url = f"https://web.archive.org/web/{rng.randint(1996, 2024)}0101000000/{url}"
    return url


def test_normalize_url_is_idempotent_property() -> None:
    """Property: for many random URLs (seeded), normalizing twice gives the result of normalizing once."""
    rng = random.Random(1234)
    checked = 0
    for _ in range(5000):
        url = _random_url(rng)
        try:
            once = normalize_url(url)
        except ValueError:
            continue
        assert normalize_url(once) == once, url
        assert url_key(once) == url_key(url)
        checked += 1
    assert checked > 4000
