"""A Hugging Face causal LM and tokenizer from local directories train under FSDP2.

The test saves a tiny Llama (tied embeddings) and a word-level tokenizer it builds itself, and
trains on a JSONL file with 2 processes. The first loss must be the saved model's own loss on
the first batch: proof that rank 0's pretrained weights reached every shard.
"""

from __future__ import annotations

import json
import random

import pytest

from tests.support.trainer import cleanup, progress_losses, start_nodes, wait_all

pytestmark = pytest.mark.slow

ADJECTIVES, NOUNS, VERBS = ["red", "blue", "big", "small"], ["cat", "dog", "mat", "log"], ["sat", "ran", "slept"]


def sentence(rng):
    # A fixed template: a model learns it within a few steps, so the loss falls well below the start.
    return f"the {rng.choice(ADJECTIVES)} {rng.choice(NOUNS)} {rng.choice(VERBS)} on the {rng.choice(NOUNS)} ."


def save_tokenizer(path, corpus):
    from tokenizers import Tokenizer, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    tok = Tokenizer(models.WordLevel(unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    tok.train_from_iterator(corpus, trainers.WordLevelTrainer(special_tokens=["<unk>", "<eos>"]))
    PreTrainedTokenizerFast(tokenizer_object=tok, unk_token="<unk>", eos_token="<eos>").save_pretrained(path)


def save_model(path, vocab_size):
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(3)
    config = LlamaConfig(
        vocab_size=vocab_size, hidden_size=64, intermediate_size=128, num_hidden_layers=2,
        num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=128, tie_word_embeddings=True,
    )
    LlamaForCausalLM(config).save_pretrained(path)


def first_batch_loss(model_dir, tokenizer_dir, data_file, seq_len, seed, global_batch):
    import torch
    import torch.nn.functional as F
    from transformers import AutoModelForCausalLM

    from pinery_trainer.config import DataConfig
    from pinery_trainer.data import HFTokenizer, batch, build_dataset

    tokenizer = HFTokenizer(str(tokenizer_dir))
    dataset = build_dataset(DataConfig(source=str(data_file), tokenizer=str(tokenizer_dir)), tokenizer, 0, seq_len, seed)
    tokens = torch.from_numpy(batch(dataset, range(global_batch)))
    model = AutoModelForCausalLM.from_pretrained(model_dir)
    with torch.no_grad():
        logits = model(input_ids=tokens[:, :-1]).logits
    return F.cross_entropy(logits.reshape(-1, logits.shape[-1]).float(), tokens[:, 1:].reshape(-1)).item()


def test_local_hugging_face_model_and_tokenizer_train(tmp_path):
    rng = random.Random(0)
    corpus = [" ".join(sentence(rng) for _ in range(rng.randint(3, 8))) for _ in range(200)]
    data = tmp_path / "data" / "train.jsonl"
    data.parent.mkdir()
    data.write_text("".join(json.dumps({"text": line}) + "\n" for line in corpus))
    tokenizer_dir, model_dir = tmp_path / "tokenizer", tmp_path / "model"
    save_tokenizer(tokenizer_dir, corpus)
    vocab = json.loads((tokenizer_dir / "tokenizer.json").read_text())["model"]["vocab"]
    save_model(model_dir, vocab_size=len(vocab) + 6)

    args = [
        "--set", "steps=12", "--set", "logEvery=1", "--set", "seed=5", "--set", "microBatchSize=2",
        "--set", "optim.lr=0.003", "--set", "optim.warmupSteps=1", "--set", "model.seqLen=32",
        "--set", f"model.hfPath={model_dir}", "--set", f"data.source={data.parent}",
        "--set", f"data.tokenizer={tokenizer_dir}", "--set", "fsdp.activationCheckpointing=true",
    ]
    nodes = start_nodes(1, 2, args, tmp_path / "logs")
    try:
        assert wait_all(nodes, timeout=120) == [0], nodes[0].stderr[-3000:]
    finally:
        cleanup(nodes)
    start_event = nodes[0].events("start")[0]
    assert start_event["model"].startswith("LlamaForCausalLM from ")
    losses = progress_losses(nodes[0])
    assert sorted(losses) == list(range(1, 13))
    expected = first_batch_loss(model_dir, tokenizer_dir, data, seq_len=32, seed=5, global_batch=4)
    assert losses[1] == pytest.approx(expected, rel=1e-4)
    assert losses[12] < losses[1] - 0.5, losses
