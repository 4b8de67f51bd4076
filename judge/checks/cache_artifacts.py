"""Read the bytes of `torch.compiler.save_cache_artifacts()` as data: which cache entries they hold, by kind and key.

The format (torch/utils/_appending_byte_serializer.py, torch/compiler/_cache.py): a CRC32 of the rest, an encoding
version (uint64, 1), then per kind of cache its name, a count and that many (key, content) records; strings are
base64 text and every field is length-prefixed (uint64, big-endian). Only names and keys are read here; the
contents (pickles, compiled code) are never unpickled or run, so the trusted side may read a learner's bytes.
"""

from __future__ import annotations

import base64
import binascii
import zlib

from judge.reports.i18n import T

VERSION = 1
MAX_RECORDS = 100_000


class NotArtifacts(ValueError):
    """Bytes not of the form save_cache_artifacts() writes; `reason` (zh and en) says where they stop being so."""

    def __init__(self, reason: T):
        super().__init__(str(reason))
        self.reason = reason


class _Reader:
    def __init__(self, data: bytes):
        self.data, self.at = data, 4

    def done(self) -> bool:
        return self.at == len(self.data)

    def uint64(self) -> int:
        if self.at + 8 > len(self.data):
            raise NotArtifacts(T("they end inside a length field at byte {at}",
                                 zh="在第 {at} 字节处的长度字段中途就结束了", at=self.at))
        value = int.from_bytes(self.data[self.at:self.at + 8], "big")
        self.at += 8
        return value

    def field(self) -> bytes:
        size = self.uint64()
        if size > len(self.data) - self.at:
            raise NotArtifacts(T("a field at byte {at} claims {size} bytes, more than remain",
                                 zh="第 {at} 字节处的字段声称有 {size} 字节，超过了剩下的长度",
                                 at=self.at, size=size))
        value = self.data[self.at:self.at + size]
        self.at += size
        return value

    def text(self) -> str:
        try:
            return base64.b64decode(self.field(), validate=True).decode("utf-8")
        except (binascii.Error, UnicodeDecodeError):
            raise NotArtifacts(T("a name or key before byte {at} is not base64 text",
                                 zh="第 {at} 字节之前的名称或键不是 base64 文本", at=self.at)) from None


def cache_entries(data: bytes) -> dict[str, list[str]]:
    """{kind of cache: [keys]} of the entries `data` holds, e.g. {"inductor": ["fogk..."], "aot_autograd": [...]};
    NotArtifacts where `data` is not of that form (checksum, version, lengths)."""
    data = bytes(data)
    if len(data) < 12:
        raise NotArtifacts(T("they are too short to hold a checksum and a version", zh="太短，装不下校验和与版本号"))
    if zlib.crc32(data[4:]).to_bytes(4, "big") != data[:4]:
        raise NotArtifacts(T("their checksum does not match their content", zh="校验和与内容不符"))
    reader = _Reader(data)
    if (version := reader.uint64()) != VERSION:
        raise NotArtifacts(T("their encoding version is {got}, not {want}", zh="编码版本是 {got}，不是 {want}",
                              got=version, want=VERSION))
    entries: dict[str, list[str]] = {}
    while not reader.done():
        kind, count = reader.text(), reader.uint64()
        if count > MAX_RECORDS:
            raise NotArtifacts(T("they claim {count} entries of one kind", zh="声称一种缓存有 {count} 个条目",
                                 count=count))
        for _ in range(count):
            entries.setdefault(kind, []).append(reader.text())
            reader.field()  # the entry's content: never read
    return entries
