"""The persisted-query cache: bounded by the bytes of its query texts, least recently used out."""

from __future__ import annotations

from server.http.persisted import QueryCache, sha256


def test_sha256_is_the_hex_digest_of_the_utf8_text() -> None:
    assert sha256("{ __typename }") == (
        "7f56e67dd21ab3f30d1ff8b7bed08893f0a0db86449836189b361dd1e56ddb4b"
    )
    assert sha256("é") != sha256("e")


def test_the_least_recently_used_query_goes_first() -> None:
    cache = QueryCache(max_bytes=10)
    cache.put("a", "aaaa")
    cache.put("b", "bbbb")
    assert cache.get("a") == "aaaa"  # b is now the least recently used
    cache.put("c", "cccc")
    assert (cache.get("a"), cache.get("b"), cache.get("c")) == ("aaaa", None, "cccc")
    assert (len(cache), cache.size) == (2, 8)


def test_sizes_count_utf8_bytes_and_an_oversized_query_is_never_kept() -> None:
    cache = QueryCache(max_bytes=4)
    cache.put("wide", "éé")  # 4 bytes
    assert cache.size == 4
    cache.put("huge", "x" * 5)
    assert cache.get("huge") is None
    assert cache.get("wide") == "éé"


def test_putting_a_known_hash_again_changes_nothing() -> None:
    cache = QueryCache(max_bytes=100)
    cache.put("a", "query")
    cache.put("a", "query")
    assert (len(cache), cache.size) == (1, 5)
