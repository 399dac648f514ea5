"""MindRecord: files MindSpore 2.10.0 wrote (``fixtures/mindspore_mindrecord.tar.gz``) read
here value for value, the same rows written here byte for byte as MindSpore wrote them,
appends, the pipeline source, and damaged files and bad rows reported clearly."""

import io
import os
import sqlite3
import struct
import tarfile
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

import mindrecord_rows
from mskernel.errors import FileFormatError
from mskernel_data.api import DatasetError, MindDataset, SequentialSampler, Shuffle, vision
from mskernel_data.mindrecord import FileReader, FileWriter

FIXTURE = Path(__file__).parent / "fixtures" / "mindspore_mindrecord.tar.gz"


@pytest.fixture(scope="module")
def mindspore_files(tmp_path_factory):
    folder = tmp_path_factory.mktemp("mindspore")
    with tarfile.open(FIXTURE) as tar:
        tar.extractall(folder, filter="data")
    return folder


def first_file(folder, name):
    return str(folder / (f"{name}.mindrecord0" if mindrecord_rows.DATASETS[name]["shard_num"] > 1
                         else f"{name}.mindrecord"))


def assert_row_matches(row, expected, schema):
    assert sorted(row) == sorted(schema)
    for name, spec in schema.items():
        value, want = row[name], expected[name]
        if spec["type"] == "bytes":
            assert value.shape == (1,) and value.dtype.kind == "S" and value.tobytes() == want
        elif "shape" in spec:
            assert value.dtype == np.dtype(spec["type"]) and np.array_equal(
                value, np.asarray(want).reshape(value.shape)) and value.shape == want.shape
        elif spec["type"] == "string":
            assert value.shape == () and str(value) == want
        else:
            assert value.shape == () and value.dtype == np.dtype(spec["type"])
            assert value == np.dtype(spec["type"]).type(want)


@pytest.mark.parametrize("name", list(mindrecord_rows.DATASETS))
def test_mindspores_files_read_value_for_value(mindspore_files, name):
    schema = mindrecord_rows.DATASETS[name]["schema"]
    dataset = MindDataset(first_file(mindspore_files, name), shuffle=False)
    assert dataset.get_col_names() == sorted(schema)
    rows = list(dataset.create_dict_iterator(output_numpy=True, num_epochs=1))
    expected = mindrecord_rows.expected_rows(name)
    assert len(rows) == len(expected) == dataset.get_dataset_size()
    for row, want in zip(rows, expected):
        assert_row_matches(row, want, schema)


def index_tables(path):
    db = sqlite3.connect(path)
    try:
        return ([r[0] for r in db.execute("SELECT sql FROM sqlite_master ORDER BY name")],
                sorted(db.execute("SELECT * FROM INDEXES")),
                list(db.execute("SELECT * FROM SHARD_NAME")))
    finally:
        db.close()


def test_writing_the_same_rows_gives_mindspores_bytes(mindspore_files, tmp_path):
    mindrecord_rows.write(FileWriter, tmp_path)
    names = sorted(os.listdir(mindspore_files))
    assert sorted(os.listdir(tmp_path)) == names
    for name in names:
        if name.endswith(".db"):  # SQLite's bytes vary with its version; the tables do not
            assert index_tables(tmp_path / name) == index_tables(mindspore_files / name)
        else:
            assert (tmp_path / name).read_bytes() == (mindspore_files / name).read_bytes(), name


def all_types_writer(path, **kwargs):
    writer = FileWriter(str(path), **kwargs)
    writer.add_schema({"s": {"type": "string"}, "i": {"type": "int64"},
                       "f": {"type": "float32"}, "b": {"type": "bytes"},
                       "a": {"type": "int32", "shape": [-1, 2]}}, "all types")
    return writer


def all_types_rows(start, count):
    return [{"s": f"row {i}", "i": i * 1000, "f": i / 4, "b": bytes([i % 256]) * (i + 1),
             "a": np.arange(2 * (i % 3), dtype=np.int32).reshape(-1, 2) - i}
            for i in range(start, start + count)]


def test_round_trip_across_pages_shards_and_readers(tmp_path):
    writer = all_types_writer(tmp_path / "data.mindrecord", shard_num=3)
    writer.set_page_size(1 << 15)
    writer.set_header_size(1 << 14)
    calls = [all_types_rows(0, 200), all_types_rows(200, 7), all_types_rows(207, 300)]
    for call in calls:
        writer.write_raw_data(call)
    writer.commit()
    files = sorted(p.name for p in tmp_path.iterdir())
    assert files == [f"data.mindrecord{k}{ext}" for k in range(3) for ext in ("", ".db")]
    dataset = MindDataset(str(tmp_path / "data.mindrecord2"), shuffle=False)
    got = {int(r["i"]): r for r in dataset.create_dict_iterator(output_numpy=True)}
    assert len(got) == 507
    schema = {"s": {"type": "string"}, "i": {"type": "int64"}, "f": {"type": "float32"},
              "b": {"type": "bytes"}, "a": {"type": "int32", "shape": [-1, 2]}}
    for row in sum(calls, []):
        assert_row_matches(got[row["i"]], row, schema)
    reader = FileReader(str(tmp_path / "data.mindrecord0"), columns=["i", "b", "a"])
    first = next(reader.get_next())
    assert first["i"] == 0 and first["b"] == b"\0" and first["a"].shape == (0, 2)
    assert reader.len() == 507 and reader.schema()["a"] == {"shape": [-1, 2], "type": "int32"}
    reader.close()


def test_open_for_append_adds_rows_and_keeps_the_old_ones(tmp_path):
    path = tmp_path / "data.mindrecord"
    writer = all_types_writer(path)
    writer.write_raw_data(all_types_rows(0, 5))
    writer.commit()
    appender = FileWriter.open_for_append(str(path))
    appender.write_raw_data(all_types_rows(5, 4))
    appender.commit()
    ids = [int(r[0]) for r in MindDataset(str(path), ["i"], shuffle=False)
           .create_tuple_iterator(output_numpy=True)]
    assert ids == [i * 1000 for i in range(9)]
    assert len(index_tables(tmp_path / "data.mindrecord.db")[1]) == 9
    with pytest.raises(DatasetError, match="add_schema must come before"):
        appender.add_schema({"x": {"type": "int32"}})


def test_a_writer_dropped_before_commit_leaves_no_files(tmp_path):
    writer = all_types_writer(tmp_path / "data.mindrecord")
    writer.write_raw_data(all_types_rows(0, 3))
    assert [p.name for p in tmp_path.iterdir()] != []  # the temporary file
    del writer
    assert list(tmp_path.iterdir()) == []


def test_mind_dataset_sampling_shuffling_padding_and_columns(tmp_path):
    writer = all_types_writer(tmp_path / "data.mindrecord", shard_num=2)
    writer.write_raw_data(all_types_rows(0, 10))
    writer.commit()
    first = str(tmp_path / "data.mindrecord0")

    def ids(**kwargs):
        dataset = MindDataset(first, ["i"], **kwargs)
        return [int(r[0]) // 1000 for r in dataset.create_tuple_iterator(output_numpy=True,
                                                                        num_epochs=1)]

    assert ids(shuffle=False) == list(range(10))
    assert ids(shuffle=False, num_shards=3, shard_id=1) == [1, 4, 7, 0]
    assert ids(sampler=SequentialSampler(2, 3)) == [2, 3, 4]
    assert sorted(ids()) == list(range(10))
    files = ids(shuffle=Shuffle.FILES)
    assert sorted(files[:5]) == files[:5] and {files[0], files[5]} == {0, 5}
    infile = ids(shuffle=Shuffle.INFILE)
    assert sorted(infile[:5]) == [0, 1, 2, 3, 4] and sorted(infile[5:]) == [5, 6, 7, 8, 9]
    padded = MindDataset(first, ["i"], shuffle=False, num_shards=4, shard_id=3,
                         padded_sample={"i": np.int64(-1000)}, num_padded=2)
    assert [int(r[0]) for r in padded.create_tuple_iterator(output_numpy=True)] == [3000,
                                                                                    7000, -1000]
    only_one = MindDataset([str(tmp_path / "data.mindrecord1")], ["s", "i"], shuffle=False)
    assert only_one.get_col_names() == ["s", "i"] and only_one.get_dataset_size() == 5
    threads = MindDataset(first, shuffle=False, num_parallel_workers=3)
    assert [int(r["i"]) for r in threads.create_dict_iterator(output_numpy=True)] == \
        [i * 1000 for i in range(10)]
    with pytest.raises(DatasetError, match="no field 'nothere'"):
        MindDataset(first, ["nothere"])
    with pytest.raises(DatasetError, match="num_shards must divide"):
        MindDataset(first, ["i"], num_shards=3, shard_id=0, padded_sample={"i": 0}, num_padded=1)


def test_images_stored_as_bytes_decode_in_a_pipeline(tmp_path):
    rng = np.random.default_rng(0)
    images = [rng.integers(0, 256, (6 + i, 5, 3), dtype=np.uint8) for i in range(4)]
    writer = FileWriter(str(tmp_path / "images.mindrecord"))
    writer.add_schema({"image": {"type": "bytes"}, "label": {"type": "int32"}})
    encoded = []
    for image in images:
        buffer = io.BytesIO()
        Image.fromarray(image).save(buffer, format="PNG")
        encoded.append(buffer.getvalue())
    writer.write_raw_data([{"image": e, "label": i} for i, e in enumerate(encoded)])
    writer.commit()
    dataset = MindDataset(str(tmp_path / "images.mindrecord"), shuffle=False)
    dataset = dataset.map(vision.Decode(), input_columns="image")
    for (image, label), want in zip(dataset.create_tuple_iterator(output_numpy=True), images):
        np.testing.assert_array_equal(image, want)


# -- writing errors ---------------------------------------------------------------------------


def test_bad_schemas_rows_and_settings_are_named(tmp_path):
    path = tmp_path / "data.mindrecord"
    with pytest.raises(DatasetError, match="type 'uint8' is not one of"):
        FileWriter(str(path)).add_schema({"x": {"type": "uint8"}})
    with pytest.raises(DatasetError, match="at most one -1"):
        FileWriter(str(path)).add_schema({"x": {"type": "int32", "shape": [-1, -1]}})
    with pytest.raises(DatasetError, match="made of 0-9, a-z"):
        FileWriter(str(path)).add_schema({"x-y": {"type": "int32"}})
    with pytest.raises(DatasetError, match="'b' is a bytes value; only scalar"):
        all_types_writer(path).add_index(["b"])
    writer = all_types_writer(path)
    good = all_types_rows(0, 1)[0]
    for change, message in [({"i": 2**70}, r"row 0, field 'i' \(int64\): .* out of range"),
                            ({"f": "1.0"}, r"field 'f' \(float32\): got a str"),
                            ({"a": np.zeros((3, 2), np.int64)},
                             r"field 'a' \(int32 array of shape \[-1, 2\]\): got an array "
                             "of int64"),
                            ({"a": np.zeros(3, np.int32)}, "shape \\(3,\\) does not fit"),
                            ({"b": "text"}, r"field 'b' \(bytes\): got a str")]:
        with pytest.raises(DatasetError, match=message):
            writer.write_raw_data([{**good, **change}])
    with pytest.raises(DatasetError, match="row 1 has no field 's'"):
        writer.write_raw_data([good, {k: v for k, v in good.items() if k != "s"}])
    writer.write_raw_data([good])
    with pytest.raises(DatasetError, match="set_page_size must come before"):
        writer.set_page_size(1 << 16)
    writer.commit()
    with pytest.raises(DatasetError, match="already exist"):
        FileWriter(str(path))
    with pytest.raises(DatasetError, match="committed"):
        writer.write_raw_data([good])
    small = FileWriter(str(tmp_path / "small.mindrecord"))
    small.set_page_size(1 << 15)
    small.add_schema({"b": {"type": "bytes"}})
    with pytest.raises(FileFormatError, match="call set_page_size with a larger size"):
        small.write_raw_data([{"b": bytes(1 << 15)}])
    with pytest.raises(DatasetError, match="multiple of 4 in"):
        FileWriter(str(tmp_path / "x.mindrecord")).set_header_size(1000)


# -- damaged files ----------------------------------------------------------------------------


@pytest.fixture
def small_file(tmp_path):
    writer = all_types_writer(tmp_path / "data.mindrecord")
    writer.set_header_size(1 << 14)
    writer.set_page_size(1 << 15)
    writer.write_raw_data(all_types_rows(0, 20))
    writer.commit()
    return tmp_path / "data.mindrecord"


def read_all(path):
    dataset = MindDataset(str(path), shuffle=False)
    return list(dataset.create_tuple_iterator(output_numpy=True, num_epochs=1))


def rewrite_header(path, edit):
    data = bytearray(path.read_bytes())
    (length,) = struct.unpack_from("<Q", data)
    text = edit(data[8:8 + length].decode())
    data[:8 + len(text.encode())] = struct.pack("<Q", len(text.encode())) + text.encode()
    path.write_bytes(bytes(data))


@pytest.mark.parametrize("damage, message", [
    (lambda p: p.write_bytes(p.read_bytes()[:5]), "is not a MindRecord file"),
    (lambda p: p.write_bytes(struct.pack("<Q", 2**62) + p.read_bytes()[8:]),
     "declare a 4611686018427387904-byte header"),
    (lambda p: p.write_bytes(b"\x20\0\0\0\0\0\0\0" + b"{not json" * 8), "header is damaged"),
    (lambda p: rewrite_header(p, lambda t: t.replace('"version":"3.0"', '"version":"9.0"')),
     "version '9.0'"),
    (lambda p: rewrite_header(p, lambda t: t.replace('"page_size":32768', '"page_size":7')),
     "page_size 7 is outside"),
    (lambda p: rewrite_header(p, lambda t: t.replace('"end_row_id":20', '"end_row_id":99999')),
     "declares rows 0 to 99999"),
    (lambda p: rewrite_header(p, lambda t: t.replace('["data.mindrecord"]', '["../../etc"]')),
     "shard_addresses must list"),
    (lambda p: p.write_bytes(p.read_bytes()[:-100]), "beyond the page size or the end"),
])
def test_damaged_headers_are_clear_errors(small_file, damage, message):
    damage(small_file)
    with pytest.raises(FileFormatError, match=message):
        read_all(small_file)


def test_forged_row_lengths_are_caught_before_any_read(small_file):
    data = bytearray(small_file.read_bytes())
    data[1 << 14:(1 << 14) + 8] = struct.pack("<Q", 2**60)  # the first blob row's length
    small_file.write_bytes(bytes(data))
    with pytest.raises(FileFormatError, match="row 0 declares 1152921504606846976 bytes"):
        read_all(small_file)


def test_mutated_files_read_or_fail_with_a_file_error(small_file):
    pristine = small_file.read_bytes()
    used = [i for i in range(len(pristine)) if pristine[i]]  # header and rows, not the holes
    rng = np.random.default_rng(0)
    outcomes = {"read": 0, "error": 0}
    for _ in range(150):
        data = bytearray(pristine)
        for at in rng.choice(used, size=int(rng.integers(1, 4)), replace=False):
            data[at] = int(rng.integers(0, 256))
        small_file.write_bytes(bytes(data))
        try:
            read_all(small_file)
            outcomes["read"] += 1
        except (FileFormatError, DatasetError):
            outcomes["error"] += 1
    assert outcomes["error"] > 0 and outcomes["read"] > 0, outcomes
