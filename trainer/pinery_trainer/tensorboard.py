"""TensorBoard scalars without TensorBoard: an event file written with the standard library only.

An event file is a TFRecord file of `Event` protocol buffers. Each record is: the data's length
as a little-endian uint64, the masked CRC-32C of those 8 bytes (uint32), the data, and the
masked CRC-32C of the data (tensorflow/core/lib/io/record_writer.cc; the mask is crc32c.h's
`Mask`). The first event carries `file_version: "brain.Event:2"`; each later one a wall time, a
step and a `Summary` of `simple_value` scalars (tensorflow/core/util/event.proto,
tensorflow/core/framework/summary.proto). TensorBoard reads every file in a directory whose
name contains `tfevents` (tensorboard/backend/event_processing/io_wrapper.py), so each run
writes a file of its own, named as TensorBoard's EventFileWriter names them.
"""

from __future__ import annotations

import os
import socket
import struct
import time
from pathlib import Path
from typing import Any, BinaryIO, Callable, Iterator, Optional

FILE_VERSION = "brain.Event:2"


def _crc32c_table() -> list[int]:
    table = []
    for byte in range(256):
        crc = byte
        for _ in range(8):
            crc = (crc >> 1) ^ 0x82F63B78 if crc & 1 else crc >> 1  # Castagnoli, reflected
        table.append(crc)
    return table


_TABLE = _crc32c_table()


def crc32c(data: bytes) -> int:
    crc = 0xFFFFFFFF
    for byte in data:
        crc = _TABLE[(crc ^ byte) & 0xFF] ^ (crc >> 8)
    return crc ^ 0xFFFFFFFF


def masked_crc32c(data: bytes) -> int:
    crc = crc32c(data)
    return (((crc >> 15) | (crc << 17)) + 0xA282EAD8) & 0xFFFFFFFF


def record(data: bytes) -> bytes:
    length = struct.pack("<Q", len(data))
    return length + struct.pack("<I", masked_crc32c(length)) + data + struct.pack("<I", masked_crc32c(data))


# --- the few protocol-buffer fields needed (developers.google.com/protocol-buffers/docs/encoding)

def _varint(value: int) -> bytes:
    value &= (1 << 64) - 1  # int64 as two's complement
    out = bytearray()
    while True:
        byte, value = value & 0x7F, value >> 7
        out.append(byte | (0x80 if value else 0))
        if not value:
            return bytes(out)


def _bytes_field(number: int, payload: bytes) -> bytes:
    return _varint(number << 3 | 2) + _varint(len(payload)) + payload


def event(wall_time: float, step: int = 0, file_version: Optional[str] = None,
          scalars: Optional[dict[str, float]] = None) -> bytes:
    """An Event: wall_time = 1 (double), step = 2 (int64), file_version = 3, summary = 5."""
    out = _varint(1 << 3 | 1) + struct.pack("<d", wall_time)
    if step:
        out += _varint(2 << 3) + _varint(step)
    if file_version is not None:
        out += _bytes_field(3, file_version.encode())
    if scalars:
        # Summary.value = 1 (repeated Value); Value.tag = 1, Value.simple_value = 2 (float)
        values = b"".join(
            _bytes_field(1, _bytes_field(1, tag.encode()) + _varint(2 << 3 | 5) + struct.pack("<f", value))
            for tag, value in scalars.items()
        )
        out += _bytes_field(5, values)
    return out


class ScalarWriter:
    """Appends scalars to a new event file in `directory`; flushed after every step."""

    def __init__(self, directory: str | Path, clock: Callable[[], float] = time.time):
        self.clock = clock
        root = Path(directory)
        root.mkdir(parents=True, exist_ok=True)
        now = clock()
        name = f"events.out.tfevents.{int(now):010d}.{socket.gethostname()}.{os.getpid()}"
        self.path = root / name
        self._file: BinaryIO = open(self.path, "ab")
        self._write(event(now, file_version=FILE_VERSION))

    def _write(self, data: bytes) -> None:
        self._file.write(record(data))
        self._file.flush()

    def scalars(self, step: int, values: dict[str, Optional[float]]) -> None:
        given = {tag: float(v) for tag, v in values.items() if v is not None}
        if given:
            self._write(event(self.clock(), step=step, scalars=given))

    def close(self) -> None:
        self._file.close()


# --- reading back (for tests and for people without TensorBoard) ---------------------------

def records(stream: BinaryIO) -> Iterator[bytes]:
    """The data of each record, checking both checksums."""
    while header := stream.read(12):
        if len(header) < 12:
            raise ValueError("truncated record header")
        length, length_crc = struct.unpack("<QI", header)
        if masked_crc32c(header[:8]) != length_crc:
            raise ValueError("bad length checksum")
        data, footer = stream.read(length), stream.read(4)
        if len(data) < length or len(footer) < 4 or masked_crc32c(data) != struct.unpack("<I", footer)[0]:
            raise ValueError("bad or truncated record data")
        yield data


def _fields(data: bytes) -> Iterator[tuple[int, int, Any]]:
    i = 0

    def varint() -> int:
        nonlocal i
        shift = value = 0
        while True:
            byte = data[i]
            i += 1
            value |= (byte & 0x7F) << shift
            shift += 7
            if not byte & 0x80:
                return value

    while i < len(data):
        key = varint()
        number, wire = key >> 3, key & 7
        value: Any
        if wire == 0:
            value = varint()
        elif wire == 1:
            value, i = struct.unpack_from("<d", data, i)[0], i + 8
        elif wire == 5:
            value, i = struct.unpack_from("<f", data, i)[0], i + 4
        elif wire == 2:
            size = varint()
            value, i = data[i:i + size], i + size
        else:
            raise ValueError(f"unsupported wire type {wire}")
        yield number, wire, value


def read_events(path: str | Path) -> list[dict[str, Any]]:
    """Each event as {wall_time, step, file_version?, scalars}."""
    out = []
    with open(path, "rb") as stream:
        for data in records(stream):
            decoded: dict[str, Any] = {"wall_time": 0.0, "step": 0, "scalars": {}}
            for number, _, value in _fields(data):
                if number == 1:
                    decoded["wall_time"] = value
                elif number == 2:
                    decoded["step"] = value
                elif number == 3:
                    decoded["file_version"] = value.decode()
                elif number == 5:
                    for n, _, item in _fields(value):
                        if n == 1:
                            fields = {k: v for k, _, v in _fields(item)}
                            decoded["scalars"][fields[1].decode()] = fields[2]
            out.append(decoded)
    return out
