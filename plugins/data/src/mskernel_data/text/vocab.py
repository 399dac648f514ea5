"""``Vocab`` (word → id) and ``Lookup``, the transform that maps tokens to ids (MindSpore's
``text.Vocab`` and ``text.Lookup``)::

    vocab = text.Vocab.from_dataset(ds, columns=["text"], special_tokens=["<pad>", "<unk>"])
    ds = ds.map(text.Lookup(vocab, "<unk>"), input_columns="text")
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any, Iterable, Mapping, Optional, Sequence, Union

import numpy as np

from mskernel import int32
from mskernel_sdk import as_storage, dtype as to_dtype

from ..transforms import Transform
from .unicode import as_strings

_MAX_ID = 2**31 - 1


class Vocab:
    """A vocabulary: each word has a distinct non-negative id.  Build one with
    :meth:`from_list`, :meth:`from_dict`, :meth:`from_file` or :meth:`from_dataset`."""

    def __init__(self, word_ids: Mapping[str, int]) -> None:
        self._ids = dict(word_ids)
        self._words = {i: w for w, i in self._ids.items()}

    # -- building -------------------------------------------------------------------------

    @classmethod
    def from_list(cls, word_list: Sequence[str], special_tokens: Optional[Sequence[str]] = None,
                  special_first: bool = True) -> "Vocab":
        """Ids in list order; ``special_tokens`` get the first ids (``special_first``) or
        the ids after the words."""
        words = list(word_list)
        _check_unique(words, "word_list")
        specials = list(special_tokens or [])
        _check_unique(specials, "special_tokens")
        clash = sorted(set(words) & set(specials))
        if clash:
            raise ValueError(f"special_tokens and word_list share {clash}")
        ordered = specials + words if special_first else words + specials
        return cls({w: i for i, w in enumerate(ordered)})

    @classmethod
    def from_dict(cls, word_dict: Mapping[str, int]) -> "Vocab":
        """The ids as given: non-negative integers, one word per id."""
        for word, i in word_dict.items():
            if not isinstance(i, (int, np.integer)) or isinstance(i, bool) or \
                    not 0 <= i <= _MAX_ID:
                raise ValueError(f"Vocab.from_dict: the id of {word!r} must be an integer in "
                                 f"[0, {_MAX_ID}], got {i!r}")
        _check_unique(list(word_dict.values()), "the ids of word_dict")
        return cls({str(w): int(i) for w, i in word_dict.items()})

    @classmethod
    def from_file(cls, file_path: Union[str, Path], delimiter: str = "",
                  vocab_size: Optional[int] = None,
                  special_tokens: Optional[Sequence[str]] = None,
                  special_first: bool = True) -> "Vocab":
        """One word per line (UTF-8); with ``delimiter`` the word is the text before its
        first occurrence (``"apple,3"``).  ``vocab_size`` reads that many lines."""
        words: list[str] = []
        with open(file_path, encoding="utf-8") as f:
            for line in f:
                if vocab_size is not None and len(words) >= vocab_size:
                    break
                line = line.rstrip("\r\n")
                words.append(line.split(delimiter, 1)[0] if delimiter else line)
        return cls.from_list(words, special_tokens, special_first)

    @classmethod
    def from_dataset(cls, dataset: Any, columns: Union[str, Sequence[str], None] = None,
                     freq_range: Optional[tuple[Optional[int], Optional[int]]] = None,
                     top_k: Optional[int] = None,
                     special_tokens: Optional[Sequence[str]] = None,
                     special_first: bool = True) -> "Vocab":
        """The words of ``columns`` (default: all) of one pass over ``dataset``, most frequent
        first (ties in code-point order).  ``freq_range=(min, max)`` keeps words seen that
        many times (inclusive; None: unbounded), then ``top_k`` keeps the most frequent."""
        counts: Counter[str] = Counter()
        for row in dataset.create_tuple_iterator(columns=columns, output_numpy=True,
                                                 num_epochs=1):
            for value in row:
                counts.update(as_strings(value, "Vocab.from_dataset").ravel().tolist())
        low, high = freq_range if freq_range is not None else (None, None)
        kept = [w for w, n in sorted(counts.items(), key=lambda wn: (-wn[1], wn[0]))
                if (low is None or n >= low) and (high is None or n <= high)]
        return cls.from_list(kept[:top_k], special_tokens, special_first)

    # -- reading ----------------------------------------------------------------------------

    def vocab(self) -> dict[str, int]:
        """The word → id dict."""
        return dict(self._ids)

    def tokens_to_ids(self, tokens: Union[str, Iterable[str]]) -> Union[int, list[int]]:
        """The id of a token or of each token (-1 for a word not in the vocabulary)."""
        if isinstance(tokens, str):
            return self._ids.get(tokens, -1)
        return [self._ids.get(t, -1) for t in tokens]

    def ids_to_tokens(self, ids: Union[int, Iterable[int]]) -> Union[str, list[str]]:
        """The word of an id or of each id (``""`` for an unknown id)."""
        if isinstance(ids, (int, np.integer)):
            return self._words.get(int(ids), "")
        return [self._words.get(int(i), "") for i in ids]

    def __repr__(self) -> str:
        return f"Vocab({len(self._ids)} words)"


def _check_unique(items: list, what: str) -> None:
    seen: set = set()
    for item in items:
        if item in seen:
            raise ValueError(f"{what} repeats {item!r}")
        seen.add(item)


class Lookup(Transform):
    """Map every token (any shape of string array) to its id in ``vocab``, as
    ``data_type`` (default int32).  A token not in the vocabulary maps to the id of
    ``unknown_token``; without one it is an error naming the token."""

    def __init__(self, vocab: Vocab, unknown_token: Optional[str] = None,
                 data_type: Any = int32) -> None:
        if not isinstance(vocab, Vocab):
            raise TypeError(f"Lookup needs a text.Vocab, got {type(vocab).__name__}")
        ids = vocab.vocab()
        if unknown_token is not None and unknown_token not in ids:
            raise ValueError(f"Lookup: unknown_token {unknown_token!r} is not in the vocabulary")
        self.vocab, self.unknown_token = vocab, unknown_token
        self.data_type = to_dtype(data_type)
        if not self.data_type.is_integer:
            raise TypeError(f"Lookup gives integer ids; data_type {self.data_type} is not an "
                            "integer type")
        self._ids = ids
        self._unknown = None if unknown_token is None else ids[unknown_token]

    def apply(self, columns: tuple, rng: np.random.Generator) -> tuple:
        return tuple(self._lookup(as_strings(c, "Lookup")) for c in columns)

    def _lookup(self, tokens: np.ndarray) -> np.ndarray:
        ids = [self._ids.get(t, self._unknown) for t in tokens.ravel().tolist()]
        if None in ids:
            missing = str(tokens.ravel()[ids.index(None)])
            raise ValueError(f"Lookup: {missing!r} is not in the vocabulary and no "
                             "unknown_token was given")
        return as_storage(np.array(ids, dtype=np.int64).reshape(tokens.shape), self.data_type)
