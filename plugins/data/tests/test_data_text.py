"""mskernel.dataset.text: the tokenizers against the outputs MindSpore 2.10.0 gives for the
same inputs (recorded from MindSpore itself), vocabularies and Lookup in pipelines."""

import numpy as np
import pytest

import mskernel.dataset.text as text
from mskernel_data.api import DatasetError, GeneratorDataset, NumpySlicesDataset

# (input, lower_case, keep_whitespace, MindSpore 2.10.0's tokens)
MINDSPORE_BASIC_TOKENS = [
    ('Hello, World!', False, False, ['Hello', ',', 'World', '!']),
    ('  Héllo   wörld\tagain\n', False, False, ['Héllo', 'wörld', 'again']),
    ("I'm don't can't.", False, False, ['I', "'", 'm', 'don', "'", 't', 'can', "'", 't', '.']),
    ('北京欢迎你 hello北京', False, False, ['北', '京', '欢', '迎', '你', 'hello', '北', '京']),
    ('[CLS] Ünïcödé [SEP] [unused12] [MASK] x', False, False,
     ['[CLS]', 'Ünïcödé', '[SEP]', '[unused12]', '[MASK]', 'x']),
    ('a\x00b\u200bc\x7fd', False, False, ['a', 'b', 'c', 'd']),
    ('numbers: 3.14, 1,000; email@x.com', False, False,
     ['numbers', ':', '3', '.', '14', ',', '1', ',', '000', ';', 'email', '@', 'x', '.', 'com']),
    ('ｆｕｌｌｗｉｄｔｈ ＡＢＣ', False, False, ['ｆｕｌｌｗｉｄｔｈ', 'ＡＢＣ']),
    ('Ǆ ﬁ ß İ', False, False, ['Ǆ', 'ﬁ', 'ß', 'İ']),
    ('tab\tnew\r\nline', False, False, ['tab', 'new', 'line']),
    ('', False, False, ['']),
    ('   ', False, False, ['']),
    ('¿Qué? ¡Sí!', False, False, ['¿', 'Qué', '?', '¡', 'Sí', '!']),
    ('emoji 😀 ok', False, False, ['emoji', '😀', 'ok']),
    ('$100 #tag @user ^_^ ~`|\\', False, False,
     ['$', '100', '#', 'tag', '@', 'user', '^', '_', '^', '~', '`', '|', '\\']),
    ('x[CLS]y [unused3]z [foo]', False, False,
     ['x', '[CLS]', 'y', '[unused3]', 'z', '[', 'foo', ']']),
    ('Hello, World!', False, True, ['Hello', ',', ' ', 'World', '!']),
    ('  Héllo   wörld\tagain\n', False, True, ['  ', 'Héllo', '   ', 'wörld', ' ', 'again', ' ']),
    ("I'm don't can't.", False, True,
     ['I', "'", 'm', ' ', 'don', "'", 't', ' ', 'can', "'", 't', '.']),
    ('北京欢迎你 hello北京', False, True, ['北', '京', '欢', '迎', '你', ' ', 'hello', '北', '京']),
    ('[CLS] Ünïcödé [SEP] [unused12] [MASK] x', False, True,
     ['[CLS]', ' ', 'Ünïcödé', ' ', '[SEP]', ' ', '[unused12]', ' ', '[MASK]', ' ', 'x']),
    ('a\x00b\u200bc\x7fd', False, True, ['a', ' ', 'b', ' ', 'c', ' ', 'd']),
    ('numbers: 3.14, 1,000; email@x.com', False, True,
     ['numbers', ':', ' ', '3', '.', '14', ',', ' ', '1', ',', '000', ';', ' ', 'email', '@', 'x',
      '.', 'com']),
    ('ｆｕｌｌｗｉｄｔｈ ＡＢＣ', False, True, ['ｆｕｌｌｗｉｄｔｈ', ' ', 'ＡＢＣ']),
    ('Ǆ ﬁ ß İ', False, True, ['Ǆ', ' ', 'ﬁ', ' ', 'ß', ' ', 'İ']),
    ('tab\tnew\r\nline', False, True, ['tab', ' ', 'new', '  ', 'line']),
    ('', False, True, ['']),
    ('   ', False, True, ['   ']),
    ('¿Qué? ¡Sí!', False, True, ['¿', 'Qué', '?', ' ', '¡', 'Sí', '!']),
    ('emoji 😀 ok', False, True, ['emoji', ' ', '😀', ' ', 'ok']),
    ('$100 #tag @user ^_^ ~`|\\', False, True,
     ['$', '100', ' ', '#', 'tag', ' ', '@', 'user', ' ', '^', '_', '^', ' ', '~', '`', '|', '\\']),
    ('x[CLS]y [unused3]z [foo]', False, True,
     ['x', '[CLS]', 'y', ' ', '[unused3]', 'z', ' ', '[', 'foo', ']']),
    ('Hello, World!', True, False, ['hello', ',', 'world', '!']),
    ('  Héllo   wörld\tagain\n', True, False, ['hello', 'world', 'again']),
    ("I'm don't can't.", True, False, ['i', "'", 'm', 'don', "'", 't', 'can', "'", 't', '.']),
    ('北京欢迎你 hello北京', True, False, ['北', '京', '欢', '迎', '你', 'hello', '北', '京']),
    ('a\x00b\u200bc\x7fd', True, False, ['a', 'bc', 'd']),
    ('numbers: 3.14, 1,000; email@x.com', True, False,
     ['numbers', ':', '3', '.', '14', ',', '1', ',', '000', ';', 'email', '@', 'x', '.', 'com']),
    ('ｆｕｌｌｗｉｄｔｈ ＡＢＣ', True, False, ['fullwidth', 'abc']),
    ('Ǆ ﬁ ß İ', True, False, ['dz', 'fi', 'ss', 'i']),
    ('tab\tnew\r\nline', True, False, ['tab', 'new', 'line']),
    ('', True, False, ['']),
    ('   ', True, False, ['']),
    ('¿Qué? ¡Sí!', True, False, ['¿', 'que', '?', '¡', 'si', '!']),
    ('emoji 😀 ok', True, False, ['emoji', '😀', 'ok']),
    ('$100 #tag @user ^_^ ~`|\\', True, False,
     ['$', '100', '#', 'tag', '@', 'user', '^', '_', '^', '~', '`', '|', '\\']),
    ('Hello, World!', True, True, ['hello', ',', ' ', 'world', '!']),
    ('  Héllo   wörld\tagain\n', True, True, ['  ', 'hello', '   ', 'world', ' ', 'again', ' ']),
    ("I'm don't can't.", True, True,
     ['i', "'", 'm', ' ', 'don', "'", 't', ' ', 'can', "'", 't', '.']),
    ('北京欢迎你 hello北京', True, True, ['北', '京', '欢', '迎', '你', ' ', 'hello', '北', '京']),
    ('a\x00b\u200bc\x7fd', True, True, ['a', ' ', 'bc', ' ', 'd']),
    ('numbers: 3.14, 1,000; email@x.com', True, True,
     ['numbers', ':', ' ', '3', '.', '14', ',', ' ', '1', ',', '000', ';', ' ', 'email', '@', 'x',
      '.', 'com']),
    ('ｆｕｌｌｗｉｄｔｈ ＡＢＣ', True, True, ['fullwidth', ' ', 'abc']),
    ('Ǆ ﬁ ß İ', True, True, ['dz', ' ', 'fi', ' ', 'ss', ' ', 'i']),
    ('tab\tnew\r\nline', True, True, ['tab', ' ', 'new', '  ', 'line']),
    ('', True, True, ['']),
    ('   ', True, True, ['   ']),
    ('¿Qué? ¡Sí!', True, True, ['¿', 'que', '?', ' ', '¡', 'si', '!']),
    ('emoji 😀 ok', True, True, ['emoji', ' ', '😀', ' ', 'ok']),
    ('$100 #tag @user ^_^ ~`|\\', True, True,
     ['$', '100', ' ', '#', 'tag', ' ', '@', 'user', ' ', '^', '_', '^', ' ', '~', '`', '|', '\\']),
]


def tokens(transform, value):
    return [str(t) for t in transform(value)]


@pytest.mark.parametrize("value, lower_case, keep_whitespace, expected", MINDSPORE_BASIC_TOKENS)
def test_basic_tokenizer_splits_as_mindspore(value, lower_case, keep_whitespace, expected):
    tokenizer = text.BasicTokenizer(lower_case=lower_case, keep_whitespace=keep_whitespace)
    assert tokens(tokenizer, value) == expected
    assert tokens(tokenizer, np.array(value)) == expected
    assert tokens(tokenizer, value.encode("utf-8")) == expected


def test_basic_tokenizer_keeps_bert_tokens_uncased_and_whole():
    reserved = "[CLS] Ünïcödé [SEP] [unused12] [MASK] x"
    # MindSpore 2.10 repeats the text between reserved tokens here (its case folding never
    # moves past the first one); this is what BERT's tokenizer gives
    assert tokens(text.BasicTokenizer(lower_case=True), reserved) == [
        "[CLS]", "unicode", "[SEP]", "[unused12]", "[MASK]", "x"]
    assert tokens(text.BasicTokenizer(lower_case=True, preserve_unused_token=False),
                  reserved) == ["[", "cls", "]", "unicode", "[", "sep", "]", "[", "unused12",
                                "]", "[", "mask", "]", "x"]
    nfkc = text.BasicTokenizer(normalization_form=text.NormalizeForm.NFKC)
    assert tokens(nfkc, "ｆｕｌｌ Ǆ ﬁ") == ["full", "DŽ", "fi"]


def test_offsets_are_utf8_byte_positions_as_in_mindspore():
    words, starts, ends = text.BasicTokenizer(with_offsets=True, keep_whitespace=True)(
        "Héllo, 北京 wörld")
    assert list(words) == ["Héllo", ",", " ", "北", "京", " ", "wörld"]
    assert starts.tolist() == [0, 6, 7, 8, 11, 14, 15] and starts.dtype == np.uint32
    assert ends.tolist() == [6, 7, 8, 11, 14, 15, 21]
    words, starts, ends = text.WhitespaceTokenizer(with_offsets=True)("a  bé\tc")
    assert (list(words), starts.tolist(), ends.tolist()) == (["a", "bé", "c"], [0, 3, 7],
                                                             [1, 6, 8])


def test_small_tokenizers_and_normalizers():
    assert tokens(text.UnicodeCharTokenizer(), "ab c") == ["a", "b", " ", "c"]
    assert tokens(text.WhitespaceTokenizer(), "a  b\tc") == ["a", "b", "c"]
    assert tokens(text.WhitespaceTokenizer(), "  ") == [""]
    assert str(text.CaseFold()("ÀbC ß")) == "àbc ss"
    folded = text.CaseFold()(np.array([["Ab", "ÇD"]]))
    assert folded.shape == (1, 2) and folded.tolist() == [["ab", "çd"]]
    assert str(text.NormalizeUTF8(text.NormalizeForm.NFD)("é")) == "e\u0301"


def lines_dataset():
    ds = NumpySlicesDataset(["b a c a", "c b d a", "e a b b"], column_names=["text"],
                            shuffle=False)
    return ds.map(text.WhitespaceTokenizer(), input_columns=["text"])


@pytest.mark.parametrize("kwargs, expected", [  # MindSpore 2.10.0's vocabularies
    ({}, {"a": 0, "b": 1, "c": 2, "d": 3, "e": 4}),
    ({"top_k": 2}, {"a": 0, "b": 1}),
    ({"freq_range": (2, 3)}, {"c": 0}),
    ({"special_tokens": ["<pad>", "<unk>"]},
     {"<pad>": 0, "<unk>": 1, "a": 2, "b": 3, "c": 4, "d": 5, "e": 6}),
    ({"special_tokens": ["<pad>", "<unk>"], "special_first": False},
     {"a": 0, "b": 1, "c": 2, "d": 3, "e": 4, "<pad>": 5, "<unk>": 6}),
])
def test_vocab_from_dataset_orders_by_frequency_as_mindspore(kwargs, expected):
    assert text.Vocab.from_dataset(lines_dataset(), columns=["text"], **kwargs).vocab() == expected


def test_vocab_from_list_dict_and_file(tmp_path):
    vocab = text.Vocab.from_list(["home", "behind", "the", "world", "<unk>"],
                                 special_tokens=["<pad>"])
    assert vocab.vocab() == {"<pad>": 0, "home": 1, "behind": 2, "the": 3, "world": 4,
                             "<unk>": 5}
    assert vocab.tokens_to_ids(["home", "xx"]) == [1, -1] and vocab.tokens_to_ids("home") == 1
    assert vocab.ids_to_tokens([0, 99]) == ["<pad>", ""] and vocab.ids_to_tokens(1) == "home"
    assert text.Vocab.from_dict({"home": 3, "behind": 2}).vocab() == {"home": 3, "behind": 2}
    path = tmp_path / "vocab.txt"
    path.write_text("home,1\nbehind 2\nthe\nworld\nbehind\n", encoding="utf-8")
    assert text.Vocab.from_file(path, delimiter=",", vocab_size=3,
                                special_tokens=["<pad>"]).vocab() == {
        "<pad>": 0, "home": 1, "behind 2": 2, "the": 3}
    with pytest.raises(ValueError, match="word_list repeats 'a'"):
        text.Vocab.from_list(["a", "a"])
    with pytest.raises(ValueError, match=r"special_tokens and word_list share \['b'\]"):
        text.Vocab.from_list(["a", "b"], special_tokens=["b"])
    with pytest.raises(ValueError, match="the id of 'home' must be an integer"):
        text.Vocab.from_dict({"home": -1})
    with pytest.raises(ValueError, match="special_tokens and word_list share"):
        text.Vocab.from_dataset(lines_dataset(), special_tokens=["a"])


def test_lookup_maps_any_shape_and_names_unknown_tokens():
    vocab = text.Vocab.from_list(["<pad>", "home", "behind", "the", "world", "<unk>"])
    lookup = text.Lookup(vocab, "<unk>")
    out = lookup(["home", "zz", "world"])
    assert out.tolist() == [1, 5, 4] and out.dtype == np.int32
    assert lookup("the").tolist() == 3
    assert lookup(np.array([["home", "the"], ["zz", "world"]])).tolist() == [[1, 3], [5, 4]]
    assert text.Lookup(vocab, "<unk>", np.int64)(["home"]).dtype == np.int64
    with pytest.raises(ValueError, match="'zz' is not in the vocabulary"):
        text.Lookup(vocab)(["home", "zz"])
    with pytest.raises(ValueError, match="unknown_token 'nothere' is not in the vocabulary"):
        text.Lookup(vocab, "nothere")
    with pytest.raises(TypeError, match="takes strings"):
        lookup(np.array([1, 2]))


def test_tokenize_vocab_lookup_pipeline_in_worker_processes():
    sentences = ["Hello, World!", "hello world", "Héllo again"]
    source = GeneratorDataset(sentences, "text", shuffle=False, num_parallel_workers=2)
    tokenized = source.map(text.BasicTokenizer(lower_case=True), input_columns="text",
                           num_parallel_workers=2, python_multiprocessing=True)
    vocab = text.Vocab.from_dataset(tokenized, columns="text", special_tokens=["<unk>"])
    assert vocab.vocab() == {"<unk>": 0, "hello": 1, "world": 2, "!": 3, ",": 4, "again": 5}
    ids = tokenized.map(text.Lookup(vocab, "<unk>"), input_columns="text")
    rows = [r[0].tolist() for r in ids.create_tuple_iterator(output_numpy=True, num_epochs=1)]
    assert rows == [[1, 4, 2, 3], [1, 2], [1, 5]]


def test_a_tokenizer_takes_one_string_per_row():
    with pytest.raises(DatasetError, match="BasicTokenizer takes one string per row"):
        list(NumpySlicesDataset({"text": [["a b", "c"]]}).map(text.BasicTokenizer(), "text"))
    pairs = NumpySlicesDataset({"text": ["a b"]}).map(
        text.BasicTokenizer(with_offsets=True), "text", ["token", "start", "end"])
    assert pairs.get_col_names() == ["token", "start", "end"]


def test_python_tokenizer_splits_with_the_user_s_function():
    source = GeneratorDataset(["Welcome to Beijing", "a  b"], "text", shuffle=False)
    tokens = source.map(text.PythonTokenizer(str.split))
    rows = [r[0].tolist() for r in tokens.create_tuple_iterator(output_numpy=True)]
    assert rows == [["Welcome", "to", "Beijing"], ["a", "b"]]
    with pytest.raises(DatasetError, match="must return a list of strings"):
        list(source.map(text.PythonTokenizer(len)))
    with pytest.raises(TypeError, match="takes a function"):
        text.PythonTokenizer("split")


def test_text_transform_modules_import_as_packages():
    import mskernel.dataset as ds  # noqa: PLC0415 - the imports are the test
    import mskernel.dataset.transforms as transforms  # noqa: PLC0415
    import mskernel.dataset.vision as vision  # noqa: PLC0415
    from mskernel.dataset.vision import Inter  # noqa: PLC0415

    assert ds.text is text and ds.vision is vision and ds.transforms is transforms
    assert Inter is vision.Inter
