"""``mskernel.dataset.text``: tokenizers, vocabularies and string transforms (MindSpore's
``mindspore.dataset.text`` names)::

    import mskernel.dataset.text as text

    ds = ds.map(text.BasicTokenizer(lower_case=True), input_columns="text")
    vocab = text.Vocab.from_dataset(ds, columns="text", special_tokens=["<pad>", "<unk>"])
    ds = ds.map(text.Lookup(vocab, "<unk>"), input_columns="text")

String columns are NumPy string arrays: a tokenizer takes one string per row and gives a
1-D array of tokens; ``Lookup`` gives ids of the tokens' shape.
"""

from .tokenizers import (
    BasicTokenizer, CaseFold, NormalizeUTF8, PythonTokenizer, Tokenizer, UnicodeCharTokenizer,
    WhitespaceTokenizer,
)
from .unicode import NormalizeForm
from .vocab import Lookup, Vocab

__all__ = [
    "BasicTokenizer", "CaseFold", "Lookup", "NormalizeForm", "NormalizeUTF8", "PythonTokenizer",
    "Tokenizer", "UnicodeCharTokenizer", "Vocab", "WhitespaceTokenizer",
]
