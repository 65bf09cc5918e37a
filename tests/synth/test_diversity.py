import math
import random

import pytest
from hopforge.synth.diversity import distinct_n, self_bleu, tokenize


def test_distinct_n_by_hand() -> None:
    texts = ["the cat sat", "the cat ran"]
    assert distinct_n(texts, 1) == pytest.approx(4 / 6)  # the cat sat ran / 6 tokens
    assert distinct_n(texts, 2) == pytest.approx(3 / 4)  # (the cat) twice, cat sat, cat ran
    assert distinct_n(texts, 3) == pytest.approx(1.0)
    assert distinct_n([], 2) == 0.0


def test_self_bleu_by_hand() -> None:
    # Each text is the other's only reference. Bigram BLEU (n=2):
    # "a b c d" vs "a b c e": unigrams 3/4, bigrams 2/3, equal lengths -> sqrt(3/4 * 2/3)
    texts = ["a b c d", "a b c e"]
    assert self_bleu(texts, n=2) == pytest.approx(math.sqrt(3 / 4 * 2 / 3))
    # a shorter hypothesis pays the brevity penalty exp(1 - 4/2); no bigram match -> 0.1/1
    texts = ["a x", "a b c d"]
    first = math.exp(1 - 4 / 2) * math.sqrt(1 / 2 * 0.1 / 1)
    second = math.sqrt(1 / 4 * 0.1 / 3)  # longer than its reference: no penalty
    assert self_bleu(texts, n=2) == pytest.approx((first + second) / 2)
    assert self_bleu(["p q", "r s"], n=2) == 0.0  # no unigram in common


def test_self_bleu_sample_is_deterministic() -> None:
    texts = [f"question number {i} about topic {i % 7}" for i in range(50)]
    assert self_bleu(texts, sample=10, seed=3) == self_bleu(texts, sample=10, seed=3)
    with pytest.raises(ValueError, match="at least 2 texts"):
        self_bleu(["alone"])


def test_self_bleu_matches_nltk() -> None:
    bleu = pytest.importorskip("nltk.translate.bleu_score")
    rng = random.Random(0)
    vocab = ["which", "what", "river", "city", "born", "founded", "the", "a", "of", "in", "by", "was", "who", "lighthouse", "port"]
    texts = [" ".join(rng.choice(vocab) for _ in range(rng.randint(3, 14))) for _ in range(40)]
    texts += [texts[0], texts[1] + " again"]  # duplicates and ties in length
    smooth = bleu.SmoothingFunction().method1
    docs = [tokenize(t) for t in texts]
    expected = [
        bleu.sentence_bleu(docs[:i] + docs[i + 1 :], hyp, smoothing_function=smooth)
        for i, hyp in enumerate(docs)
    ]
    assert self_bleu(texts) == pytest.approx(sum(expected) / len(expected), rel=1e-9)
    expected2 = [
        bleu.sentence_bleu(docs[:i] + docs[i + 1 :], hyp, weights=(0.5, 0.5),
                           smoothing_function=smooth)
        for i, hyp in enumerate(docs)
    ]
    assert self_bleu(texts, n=2) == pytest.approx(sum(expected2) / len(expected2), rel=1e-9)
