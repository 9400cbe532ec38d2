"""A GGUF file's structure checked in well under a second, before transformers reads it.

transformers' GGUF support parses every metadata field with ``gguf``'s reader (minutes for
a 262k-token vocabulary on a busy CPU) and fails on a bad file with a message that does not
name it. This reader walks the header, the metadata (skipping values, not building them)
and the tensor table with ``struct`` over one ``mmap``, so a file that is not GGUF, cut
short or of an architecture transformers cannot build is refused with one line naming it
before any of that work.
"""

from __future__ import annotations

import mmap
import struct
from dataclasses import dataclass
from pathlib import Path

from clue_core.plugin import ClueError

MAGIC = b"GGUF"
#: Byte sizes of the scalar value types (``gguf.GGUFValueType``: 8 is a string, 9 an array).
_SCALARS = {0: 1, 1: 1, 2: 2, 3: 2, 4: 4, 5: 4, 6: 4, 7: 1, 10: 8, 11: 8, 12: 8}
_STRING, _ARRAY = 8, 9


@dataclass(frozen=True, slots=True)
class GGUFSummary:
    """What the check found: the architecture, the tensor count and the bytes the tensors need."""

    architecture: str
    tensors: int
    needed: int
    size: int


class _Cut(Exception):
    """The file ends inside its header, metadata or tensor table."""


class _Reader:
    def __init__(self, data: mmap.mmap) -> None:
        self.data = data
        self.at = 0

    def take(self, n: int) -> bytes:
        if self.at + n > len(self.data):
            raise _Cut
        chunk = self.data[self.at:self.at + n]
        self.at += n
        return chunk

    def u32(self) -> int:
        return struct.unpack("<I", self.take(4))[0]

    def u64(self) -> int:
        return struct.unpack("<Q", self.take(8))[0]

    def string(self) -> bytes:
        return self.take(self.u64())

    def skip(self, kind: int) -> None:
        if kind in _SCALARS:
            self.take(_SCALARS[kind])
        elif kind == _STRING:
            self.string()
        elif kind == _ARRAY:
            inner, count = self.u32(), self.u64()
            if inner in _SCALARS:
                self.take(_SCALARS[inner] * count)
            else:
                for _ in range(count):
                    self.skip(inner)
        else:
            raise ValueError(f"unknown metadata value type {kind}")


def _tensor_bytes(kind: int, shape: list[int]) -> int:
    from gguf.constants import GGML_QUANT_SIZES, GGMLQuantizationType

    try:
        block, size = GGML_QUANT_SIZES[GGMLQuantizationType(kind)]
    except (ValueError, KeyError):
        raise ValueError(f"unknown tensor type {kind}") from None
    elements = 1
    for dim in shape:
        elements *= dim
    return elements // block * size


def check_gguf(path: Path) -> GGUFSummary:
    """The file's summary, or one :class:`ClueError` line naming it (missing, not GGUF, cut short…)."""
    if not path.exists():
        raise ClueError(f"{path}: no such GGUF file")
    if not path.is_file():
        raise ClueError(f"{path}: not a file (llm:<file>.gguf names one GGUF file)")
    size = path.stat().st_size
    if size < 24:
        raise ClueError(f"{path}: not a GGUF file ({size} bytes; a GGUF file starts with a 24-byte header)")
    with path.open("rb") as handle, mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as data:
        if data[:4] != MAGIC:
            raise ClueError(f"{path}: not a GGUF file (it starts with {bytes(data[:4])!r}, not b'GGUF')")
        try:
            return _walk(path, _Reader(data), size)
        except _Cut:
            raise ClueError(f"{path}: cut short ({size} bytes end inside its header or tensor table); copy it "
                            f"again") from None
        except (ValueError, UnicodeDecodeError) as exc:
            raise ClueError(f"{path}: not a readable GGUF file ({exc})") from None


def _walk(path: Path, reader: _Reader, size: int) -> GGUFSummary:
    reader.take(4)
    version = reader.u32()
    if version not in (2, 3):
        raise ValueError(f"GGUF version {version}; transformers reads versions 2 and 3")
    tensors, fields = reader.u64(), reader.u64()
    architecture, alignment = "", 32
    for _ in range(fields):
        name = reader.string()
        kind = reader.u32()
        if name == b"general.architecture" and kind == _STRING:
            architecture = reader.string().decode()
        elif name == b"general.alignment" and kind == 4:
            alignment = reader.u32()
        else:
            reader.skip(kind)
    needed = 0
    for _ in range(tensors):
        reader.string()
        dims = reader.u32()
        shape = [reader.u64() for _ in range(dims)]
        kind, offset = reader.u32(), reader.u64()
        needed = max(needed, offset + _tensor_bytes(kind, shape))
    start = -(-reader.at // alignment) * alignment
    if start + needed > size:
        raise ClueError(f"{path}: cut short ({size} bytes; its tensors need {start + needed}); copy it again")
    _check_architecture(path, architecture)
    return GGUFSummary(architecture, tensors, start + needed, size)


def _check_architecture(path: Path, architecture: str) -> None:
    from transformers.modeling_gguf_pytorch_utils import GGUF_SUPPORTED_ARCHITECTURES

    if not architecture:
        raise ClueError(f"{path}: its metadata names no architecture (general.architecture)")
    known = set(GGUF_SUPPORTED_ARCHITECTURES) - {"general", "tokenizer"}
    if architecture not in known:
        raise ClueError(f"{path}: architecture {architecture!r} is not one transformers builds from GGUF "
                        f"(it builds: {', '.join(sorted(known))})")
