"""The trainer's TensorBoard event files (pinery_trainer.tensorboard), checked against the
documented formats: no TensorBoard or protobuf package is installed here to read them back, so
the reader is ours too, and the bytes are checked by hand for one event."""

from __future__ import annotations

import io
import struct

import pytest

from pinery_trainer.tensorboard import FILE_VERSION, ScalarWriter, crc32c, event, masked_crc32c, read_events, record, records


def test_crc32c_check_value():
    # The CRC-32C (Castagnoli) check value of "123456789" (RFC 3720, appendix B.4 catalogue).
    assert crc32c(b"123456789") == 0xE3069283
    assert crc32c(b"") == 0


def test_masked_crc_is_rotated_right_15_plus_the_constant():
    crc = crc32c(b"abc")
    assert masked_crc32c(b"abc") == ((((crc >> 15) | (crc << 17)) & 0xFFFFFFFF) + 0xA282EAD8) & 0xFFFFFFFF


def test_record_framing():
    data = b"hello"
    framed = record(data)
    assert framed[:8] == struct.pack("<Q", 5) and framed[8:12] == struct.pack("<I", masked_crc32c(framed[:8]))
    assert framed[12:17] == data and framed[17:] == struct.pack("<I", masked_crc32c(data)) and len(framed) == 21
    assert list(records(io.BytesIO(framed + record(b"")))) == [data, b""]


def test_event_bytes_follow_the_protobuf_encoding():
    # Event{wall_time=0.0 (1, fixed64), step=1 (2, varint), summary (5) {value (1) {tag "a" (1), simple_value 1.0 (2, fixed32)}}}
    want = bytes.fromhex("09" + "00" * 8 + "1001" + "2a0a" + "0a08" + "0a0161" + "150000803f")
    assert event(0.0, step=1, scalars={"a": 1.0}) == want
    assert event(0.0, file_version="x") == bytes.fromhex("09" + "00" * 8 + "1a0178")
    assert event(0.0, step=300)[9:] == bytes.fromhex("10ac02")  # a varint of two bytes


def test_writer_and_reader_agree(tmp_path):
    clock = iter([100.0, 101.5, 102.5]).__next__
    writer = ScalarWriter(tmp_path / "tb", clock=clock)
    writer.scalars(10, {"train/loss": 4.5, "train/learning_rate": 3e-4, "missing": None})
    writer.scalars(20, {"train/loss": 3.25})
    writer.scalars(30, {"missing": None})  # nothing to write
    writer.close()
    (path,) = (tmp_path / "tb").iterdir()
    assert path.name.startswith("events.out.tfevents.0000000100.") and path == writer.path
    events = read_events(path)
    assert events[0] == {"wall_time": 100.0, "step": 0, "file_version": FILE_VERSION, "scalars": {}}
    assert [(e["wall_time"], e["step"]) for e in events[1:]] == [(101.5, 10), (102.5, 20)]
    assert events[1]["scalars"]["train/loss"] == 4.5
    assert events[1]["scalars"]["train/learning_rate"] == pytest.approx(3e-4, rel=1e-6)  # a float32
    assert events[2]["scalars"] == {"train/loss": 3.25}


def test_a_damaged_file_is_refused(tmp_path):
    writer = ScalarWriter(tmp_path, clock=lambda: 1.0)
    writer.scalars(1, {"train/loss": 2.0})
    writer.close()
    data = bytearray(writer.path.read_bytes())
    data[-6] ^= 0xFF
    writer.path.write_bytes(bytes(data))
    with pytest.raises(ValueError, match="bad"):
        read_events(writer.path)
