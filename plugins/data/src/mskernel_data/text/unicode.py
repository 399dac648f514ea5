"""The Unicode rules of the text transforms, as MindSpore's (ICU-based) ones apply them:
NFKC case folding, accent stripping, and the character classes BERT's tokenizer splits on."""

from __future__ import annotations

import enum
import unicodedata

import numpy as np

#: Unicode's Default_Ignorable_Code_Point ranges (DerivedCoreProperties.txt), which ICU's
#: NFKC_Casefold removes.
_DEFAULT_IGNORABLE = (
    (0x00AD, 0x00AD), (0x034F, 0x034F), (0x061C, 0x061C), (0x115F, 0x1160), (0x17B4, 0x17B5),
    (0x180B, 0x180F), (0x200B, 0x200F), (0x202A, 0x202E), (0x2060, 0x206F), (0x3164, 0x3164),
    (0xFE00, 0xFE0F), (0xFEFF, 0xFEFF), (0xFFA0, 0xFFA0), (0xFFF0, 0xFFF8),
    (0x1BCA0, 0x1BCA3), (0x1D173, 0x1D17A), (0xE0000, 0xE0FFF),
)
_IGNORABLE = {cp: None for lo, hi in _DEFAULT_IGNORABLE for cp in range(lo, hi + 1)}

#: The CJK blocks BERT (and MindSpore's BasicTokenizer) split into one token per character.
_CJK = ((0x4E00, 0x9FFF), (0x3400, 0x4DBF), (0x20000, 0x2A6DF), (0x2A700, 0x2B73F),
        (0x2B740, 0x2B81F), (0x2B820, 0x2CEAF), (0xF900, 0xFAFF), (0x2F800, 0x2FA1F))
#: ASCII symbols BERT counts as punctuation besides Unicode's P* categories: !-/ :-@ [-` {-~
_ASCII_PUNCTUATION = frozenset(chr(c) for lo, hi in ((33, 47), (58, 64), (91, 96), (123, 126))
                               for c in range(lo, hi + 1))


class NormalizeForm(enum.Enum):
    """Unicode normalization forms (MindSpore's ``text.NormalizeForm``)."""

    NONE = None
    NFC = "NFC"
    NFKC = "NFKC"
    NFD = "NFD"
    NFKD = "NFKD"


def normalize(text: str, form: NormalizeForm) -> str:
    return text if form.value is None else unicodedata.normalize(form.value, text)


def nfkc_casefold(text: str) -> str:
    """Unicode's NFKC_Casefold: compatibility-normalised, case-folded (``ß`` → ``ss``,
    ``ﬁ`` → ``fi``, full-width → ASCII), default-ignorable characters removed."""
    folded = unicodedata.normalize("NFKC", unicodedata.normalize("NFKC", text).casefold())
    return folded.translate(_IGNORABLE)


def strip_accents(text: str) -> str:
    """Decompose (NFD) and drop the non-spacing marks (category Mn)."""
    return "".join(c for c in unicodedata.normalize("NFD", text)
                   if unicodedata.category(c) != "Mn")


def blank_controls(text: str) -> str:
    """Control and format characters (categories Cc, Cf: tab, newline, NUL, zero-width
    space...) as spaces."""
    return "".join(" " if unicodedata.category(c) in ("Cc", "Cf") else c for c in text)


def is_punctuation(char: str) -> bool:
    return char in _ASCII_PUNCTUATION or unicodedata.category(char).startswith("P")


def is_cjk(char: str) -> bool:
    cp = ord(char)
    return any(lo <= cp <= hi for lo, hi in _CJK)


def as_strings(value: object, owner: str) -> np.ndarray:
    """``value`` (a str, bytes, or an array of them) as an array of Python strings; bytes
    are decoded as UTF-8."""
    arr = np.asarray(value)
    if arr.dtype.kind == "S" or (arr.dtype.kind == "O" and all(isinstance(v, bytes)
                                                               for v in arr.flat)):
        arr = np.char.decode(arr.astype(np.bytes_), "utf-8")
    if arr.dtype.kind != "U" and not (arr.dtype.kind == "O" and all(isinstance(v, str)
                                                                    for v in arr.flat)):
        raise TypeError(f"{owner} takes strings, got an array of {arr.dtype}")
    return arr.astype(str)


def byte_offsets(text: str) -> np.ndarray:
    """The UTF-8 byte position of each character boundary of ``text`` (``len(text) + 1``
    entries): token offsets are reported in bytes, as MindSpore reports them."""
    return np.cumsum([0, *(len(c.encode("utf-8")) for c in text)], dtype=np.uint32)
