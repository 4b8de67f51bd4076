"""judge.checks.cache_artifacts: save_cache_artifacts()'s bytes read as data, never unpickled."""

import pytest
from torch.compiler._cache import CacheArtifactFactory, CacheArtifactManager, _serialize_single_cache
from torch.utils._appending_byte_serializer import AppendingByteSerializer

from judge.checks.cache_artifacts import NotArtifacts, cache_entries

# An entry's content: a pickle whose loading imports a module that does not exist (it would fail, loudly)
CONTENT = b"cno_such_module_anywhere\nboom\n."


def saved(entries: dict[str, list[str]]) -> bytes:
    """Bytes in torch's own format (its serializer), each entry's content a pickle that must never be loaded."""
    CacheArtifactManager._ensure_cache_artifacts_registered()
    writer = AppendingByteSerializer(serialize_fn=_serialize_single_cache)
    for kind, keys in entries.items():
        writer.extend([(kind, [CacheArtifactFactory.create(kind, key, CONTENT) for key in keys])])
    return writer.to_bytes()


def test_kinds_and_keys_are_read_and_no_content_is_loaded():
    entries = {"inductor": ["fkey1", "fkey2"], "aot_autograd": ["akey"]}
    assert cache_entries(saved(entries)) == entries


@pytest.mark.parametrize("mangle", [
    lambda b: b"",
    lambda b: b[:-1],                                      # the checksum no longer matches
    lambda b: b"not artifacts",
    lambda b: (0).to_bytes(4, "big") + b[4:],              # a wrong checksum
])
def test_bytes_of_another_form_are_refused(mangle):
    with pytest.raises(NotArtifacts):
        cache_entries(mangle(saved({"inductor": ["k"]})))


def test_a_length_beyond_the_end_is_refused_not_read():
    import zlib

    body = (1).to_bytes(8, "big") + (10**12).to_bytes(8, "big") + b"abc"  # version 1, a name claiming 1e12 bytes
    with pytest.raises(NotArtifacts, match="more than remain"):
        cache_entries(zlib.crc32(body).to_bytes(4, "big") + body)
