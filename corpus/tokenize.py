"""A configurable word tokenizer for BM25: Unicode-aware, lower-cased, optional stopwords and stems."""

from __future__ import annotations

import re
import threading
import unicodedata
from dataclasses import asdict, dataclass, field
from typing import Any

from hopforge.corpus.errors import HopforgeError

# Words are runs of Unicode letters and digits; an apostrophe or hyphen joins them no further
# (so "Ilse's" -> "ilse", "s" and "north-west" -> "north", "west"), which is what BM25 wants.
_WORD = re.compile(r"[^\W_]+", re.UNICODE)

# A short English list (the classic Lucene/SMART core); enough to drop the tokens that carry no
# retrieval signal without removing content words such as "first" or "new".
ENGLISH_STOPWORDS = frozenset(
    ["a", "an", "and", "are", "as", "at", "be", "but", "by", "for", "from", "had", "has", "have", "he", "her", "his", "i", "if", "in", "into", "is", "it", "its", "of", "on", "or", "she", "that", "the", "their", "them", "then", "there", "these", "they", "this", "to", "was", "were", "which", "while", "who", "will", "with", "would", "you", "your", "not", "no", "s", "t"]
)

STOPWORDS = {"english": ENGLISH_STOPWORDS}


@dataclass(frozen=True, slots=True, kw_only=True)
class TokenizerConfig:
    """How text becomes BM25 tokens; recorded in the index manifest."""

    lowercase: bool = True
    stopwords: bool = False
    stem: bool = False
    language: str = "english"
    min_length: int = 1

    def __post_init__(self) -> None:
        if self.min_length < 1 or self.min_length > 32:
            raise HopforgeError(
                f"tokenizer min_length={self.min_length} is out of range: use 1 to 32"
            )
        if self.stopwords and self.language not in STOPWORDS:
            raise HopforgeError(
                f"tokenizer language={self.language!r} has no stopword list: use one of "
                f"{sorted(STOPWORDS)} or set stopwords = false"
            )
        if self.stem:
            import snowballstemmer

            if self.language not in snowballstemmer.algorithms():
                raise HopforgeError(
                    f"tokenizer language={self.language!r} has no snowball stemmer: use one of "
                    f"{', '.join(snowballstemmer.algorithms())} or set stem = false"
                )

    def to_dict(self) -> dict[str, Any]:
        """The settings by field name, as the index manifest records them."""
        return asdict(self)

    @classmethod
    def from_dict(cls, row: dict[str, Any]) -> TokenizerConfig:
        return cls(**row)


@dataclass(slots=True)
class Tokenizer:
    """Turns text into a list of tokens; calling it is the whole interface."""

    config: TokenizerConfig = field(default_factory=TokenizerConfig)
    _stem_cache: dict[str, str] = field(default_factory=dict, repr=False)
    _local: threading.local = field(default_factory=threading.local, repr=False)

    def _stemmer(self) -> Any:
        """This thread's snowball stemmer (a stemmer keeps state while it works on a word)."""
        stemmer = getattr(self._local, "stemmer", None)
        if stemmer is None:
            import snowballstemmer

            stemmer = self._local.stemmer = snowballstemmer.stemmer(self.config.language)
        return stemmer

    def __call__(self, text: str) -> list[str]:
        """Tokens of `text`, in order (repeats kept: BM25 counts them)."""
        cfg = self.config
        text = _normalize(text)
        if cfg.lowercase:
            text = text.casefold()
        tokens = _WORD.findall(text)
        if cfg.min_length > 1:
            tokens = [t for t in tokens if len(t) >= cfg.min_length]
        if cfg.stopwords:
            stop = STOPWORDS[cfg.language]
            tokens = [t for t in tokens if t not in stop]
        if cfg.stem:
            cache = self._stem_cache
            stemmer = None
            out = []
            for t in tokens:
                s = cache.get(t)
                if s is None:
                    stemmer = stemmer or self._stemmer()
                    s = stemmer.stemWord(t)
                    if len(cache) < 1_000_000:
                        cache[t] = s
                out.append(s)
            tokens = out
        return tokens

    def batch(self, texts: list[str]) -> list[list[str]]:
        """Tokens of each text."""
        return [self(t) for t in texts]


def _normalize(text: str) -> str:
    """NFKC-normalize only when needed (ligatures, full-width forms), keeping ASCII text fast."""
    if text.isascii():
        return text
    return unicodedata.normalize("NFKC", text)
