"""Which samples each rank reads, and the datasets behind the sample indices."""

from __future__ import annotations

import json

import numpy as np
import pytest

from pinery_trainer.config import DataConfig
from pinery_trainer.configfile import ConfigError
from pinery_trainer.data import ByteTokenizer, SyntheticData, TokenWindows, batch, build_dataset
from pinery_trainer.sampling import BatchPlan, EpochOrder, batch_plan


def step_samples(plan: BatchPlan, samples_seen: int) -> list[int]:
    return [
        i
        for rank in range(plan.world_size)
        for micro in range(plan.accum_steps)
        for i in plan.indices(samples_seen, rank, micro)
    ]


@pytest.mark.parametrize("micro, accum, world", [(1, 1, 1), (4, 1, 2), (2, 3, 4), (3, 2, 3)])
def test_a_step_reads_exactly_the_next_global_batch(micro, accum, world):
    plan = BatchPlan(micro, accum, world)
    for seen in (0, plan.global_batch, 5 * plan.global_batch + 3):
        assert sorted(step_samples(plan, seen)) == list(range(seen, seen + plan.global_batch))


def test_the_global_batch_fixes_the_samples_of_every_step_at_any_world_size():
    plans = [batch_plan(2, 1, 16, world) for world in (1, 2, 4, 8)]
    assert [p.accum_steps for p in plans] == [8, 4, 2, 1]
    for step in range(5):
        expected = list(range(step * 16, step * 16 + 16))
        assert all(sorted(step_samples(p, step * 16)) == expected for p in plans)


def test_a_global_batch_that_does_not_split_evenly_is_refused():
    with pytest.raises(ValueError, match=r"microBatchSize x world size \(2 x 3 = 6\)"):
        batch_plan(2, 1, 16, 3)
    assert batch_plan(2, 5, None, 3) == BatchPlan(2, 5, 3)


def test_epoch_order_is_a_seeded_permutation_per_epoch():
    order = EpochOrder(10, seed=1)
    first, second = [order(i) for i in range(10)], [order(i) for i in range(10, 20)]
    assert sorted(first) == sorted(second) == list(range(10))
    assert first != second
    again = EpochOrder(10, seed=1)
    assert [again(i) for i in range(15, 5, -1)] == [order(i) for i in range(15, 5, -1)]
    assert [EpochOrder(10, seed=2)(i) for i in range(10)] != first


def test_synthetic_samples_depend_only_on_seed_and_index():
    data = SyntheticData(vocab_size=50, seq_len=16, seed=3)
    sample = data.sample(7)
    assert sample.shape == (17,) and sample.dtype == np.int64
    assert sample.min() >= 0 and sample.max() < 50
    assert np.array_equal(sample, SyntheticData(50, 16, 3).sample(7))
    assert not np.array_equal(sample, data.sample(8))
    assert not np.array_equal(sample, SyntheticData(50, 16, 4).sample(7))
    assert batch(data, range(3, 6)).shape == (3, 17)


def test_token_windows_cover_the_stream_with_shifted_targets():
    tokens = np.arange(41, dtype=np.int32)
    data = TokenWindows(tokens, seq_len=10, seed=0)
    assert data.windows == 4
    starts = sorted(int(data.sample(i)[0]) for i in range(4))
    assert starts == [0, 10, 20, 30]
    assert data.sample(0).tolist() == list(range(int(data.sample(0)[0]), int(data.sample(0)[0]) + 11))


def test_byte_tokenizer():
    tok = ByteTokenizer()
    assert tok.encode("hé") == [104, 195, 169] and tok.eos_id == 256 and tok.vocab_size == 257


def test_files_are_read_in_order_and_separated_by_end_of_document(tmp_path):
    (tmp_path / "b.jsonl").write_text(json.dumps({"text": "cd"}) + "\n\n" + json.dumps({"text": "e"}) + "\n")
    (tmp_path / "a.txt").write_text("ab")
    (tmp_path / "skip.bin").write_bytes(b"\0")
    data = build_dataset(DataConfig(source=str(tmp_path)), ByteTokenizer(), 257, seq_len=2, seed=0)
    assert data.tokens.tolist() == [97, 98, 256, 99, 100, 256, 101, 256]
    assert data.windows == 3


@pytest.mark.parametrize(
    "files, config, field, words",
    [
        ({"a.jsonl": '{"body": "x"}\n'}, {}, "data.textField", "has no string field 'text'"),
        ({"a.jsonl": "{oops\n"}, {}, "data.source", "a.jsonl:1 is not JSON"),
        ({"a.txt": "ab"}, {}, "data.source", "fewer than seqLen + 1"),
        ({"a.bin": "ab"}, {}, "data.source", "holds no .txt"),
        ({}, {"source": "/no/such/dir"}, "data.source", "does not exist"),
    ],
)
def test_data_errors_name_the_field(tmp_path, files, config, field, words):
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    with pytest.raises(ConfigError) as info:
        build_dataset(DataConfig(**{"source": str(tmp_path), **config}), ByteTokenizer(), 257, seq_len=8, seed=0)
    assert info.value.problems[0][0] == field and words in info.value.problems[0][1]


def test_jsonl_format_can_be_forced(tmp_path):
    (tmp_path / "corpus.data").write_text('{"content": "xyz"}\n')
    config = DataConfig(source=str(tmp_path / "corpus.data"), format="jsonl", text_field="content")
    data = build_dataset(config, ByteTokenizer(), 257, seq_len=2, seed=0)
    assert data.tokens.tolist() == [120, 121, 122, 256]
