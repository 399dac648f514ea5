"""Tokenizers and string normalizers (MindSpore's ``text`` transforms of those names).

A tokenizer takes one string (a scalar string column) and gives a 1-D string array of
tokens; with ``with_offsets=True`` it gives three columns — tokens, and the UTF-8 byte
offsets where each token starts and ends (uint32) — so its ``map`` names three
``output_columns``.  An input without tokens gives one empty token, as MindSpore does.
"""

from __future__ import annotations

import re
from typing import Callable, Iterator, Sequence

import numpy as np

from ..transforms import Transform
from .unicode import (
    NormalizeForm, as_strings, blank_controls, byte_offsets, is_cjk, is_punctuation,
    nfkc_casefold, normalize, strip_accents,
)

Span = tuple[int, int]
#: BERT's reserved tokens, which BasicTokenizer keeps whole with ``preserve_unused_token``.
_RESERVED = re.compile(r"\[(?:CLS|SEP|UNK|PAD|MASK|unused\d+)\]")
_RESERVED_UNFOLDED = re.compile(r"\[(?:CLS|SEP|UNK|PAD|MASK)\]")


class Tokenizer(Transform):
    """The base of tokenizers: :meth:`spans` says where the tokens of a (prepared) string
    are; :meth:`prepare` may rewrite the string first (offsets refer to the rewritten
    string, as in MindSpore)."""

    def __init__(self, with_offsets: bool = False) -> None:
        self.with_offsets = bool(with_offsets)

    def prepare(self, text: str) -> str:
        return text

    def spans(self, text: str) -> Iterator[Span]:
        raise NotImplementedError

    def apply(self, columns: tuple, rng: np.random.Generator) -> tuple:
        text = self.prepare(_one_string(columns, type(self).__name__))
        spans = list(self.spans(text)) or [(0, 0)]
        tokens = np.array([text[a:b] for a, b in spans], dtype=str)
        if not self.with_offsets:
            return (tokens,)
        bytes_at = byte_offsets(text)
        return (tokens, bytes_at[[a for a, _ in spans]], bytes_at[[b for _, b in spans]])


def _one_string(columns: tuple, who: str) -> str:
    """The string of a row's one scalar string column."""
    if len(columns) != 1:
        raise ValueError(f"{who} takes one column, got {len(columns)}")
    strings = as_strings(columns[0], who)
    if strings.ndim != 0:
        raise ValueError(f"{who} takes one string per row (a scalar string column), got an "
                         f"array of shape {strings.shape}")
    return str(strings)


class PythonTokenizer(Transform):
    """A tokenizer of your own: ``tokenizer(text)`` gives the list of tokens of one string."""

    def __init__(self, tokenizer: Callable[[str], Sequence[str]]) -> None:
        if not callable(tokenizer):
            raise TypeError(f"PythonTokenizer takes a function from a string to its tokens, "
                            f"got {type(tokenizer).__name__}")
        self.tokenizer = tokenizer

    def apply(self, columns: tuple, rng: np.random.Generator) -> tuple:
        tokens = self.tokenizer(_one_string(columns, "PythonTokenizer"))
        if not isinstance(tokens, (list, tuple)) or not all(isinstance(t, str) for t in tokens):
            raise TypeError(f"PythonTokenizer: the tokenizer must return a list of strings, "
                            f"got {tokens!r}")
        return (np.array(list(tokens), dtype=str),)


class WhitespaceTokenizer(Tokenizer):
    """Split on runs of whitespace."""

    def spans(self, text: str) -> Iterator[Span]:
        for match in re.finditer(r"\S+", text):
            yield match.span()


class UnicodeCharTokenizer(Tokenizer):
    """One token per character."""

    def spans(self, text: str) -> Iterator[Span]:
        return ((i, i + 1) for i in range(len(text)))


class BasicTokenizer(Tokenizer):
    """BERT's basic tokenization: split on whitespace, split off every punctuation mark
    (Unicode's and ASCII's symbols) and every CJK character.

    ``lower_case`` case-folds (NFKC) and strips accents (``"Héllo"`` → ``"hello"``);
    otherwise ``normalization_form`` is applied.  Control characters count as whitespace;
    ``keep_whitespace`` keeps the whitespace runs as tokens.  ``preserve_unused_token`` keeps
    ``[CLS]``, ``[SEP]``, ``[UNK]``, ``[PAD]``, ``[MASK]`` and ``[unused<n>]`` whole (and
    uncased)."""

    def __init__(self, lower_case: bool = False, keep_whitespace: bool = False,
                 normalization_form: NormalizeForm = NormalizeForm.NONE,
                 preserve_unused_token: bool = True, with_offsets: bool = False) -> None:
        super().__init__(with_offsets)
        self.lower_case, self.keep_whitespace = bool(lower_case), bool(keep_whitespace)
        self.normalization_form = NormalizeForm(normalization_form)
        self.preserve_unused_token = bool(preserve_unused_token)

    def prepare(self, text: str) -> str:
        if self.lower_case:
            text = strip_accents(self._fold(text))
        else:
            text = normalize(text, self.normalization_form)
        return blank_controls(text)

    def _fold(self, text: str) -> str:
        if not self.preserve_unused_token:
            return nfkc_casefold(text)
        out, start = [], 0
        for match in _RESERVED_UNFOLDED.finditer(text):
            out += [nfkc_casefold(text[start:match.start()]), match.group()]
            start = match.end()
        return "".join(out) + nfkc_casefold(text[start:])

    def spans(self, text: str) -> Iterator[Span]:
        i, word = 0, None
        while i < len(text):
            reserved = _RESERVED.match(text, i) if self.preserve_unused_token else None
            char = text[i]
            end = (reserved.end() if reserved else
                   _run_end(text, i) if char.isspace() else
                   i + 1 if is_punctuation(char) or is_cjk(char) else None)
            if end is None:  # a letter, digit or symbol: part of a word
                word = i if word is None else word
                i += 1
                continue
            if word is not None:
                yield word, i
                word = None
            if self.keep_whitespace or not char.isspace():
                yield i, end
            i = end
        if word is not None:
            yield word, len(text)


def _run_end(text: str, i: int) -> int:
    while i < len(text) and text[i].isspace():
        i += 1
    return i


class CaseFold(Transform):
    """Case-fold every string of the columns (NFKC_Casefold: ``"ß"`` → ``"ss"``)."""

    def apply(self, columns: tuple, rng: np.random.Generator) -> tuple:
        return tuple(np.vectorize(nfkc_casefold, otypes=[str])(as_strings(c, "CaseFold"))
                     for c in columns)


class NormalizeUTF8(Transform):
    """Unicode-normalize every string of the columns to ``normalize_form``."""

    def __init__(self, normalize_form: NormalizeForm = NormalizeForm.NFKC) -> None:
        self.normalize_form = NormalizeForm(normalize_form)

    def apply(self, columns: tuple, rng: np.random.Generator) -> tuple:
        form = self.normalize_form
        return tuple(np.vectorize(lambda s: normalize(s, form), otypes=[str])(
            as_strings(c, "NormalizeUTF8")) for c in columns)
