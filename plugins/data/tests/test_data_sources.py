"""Sources: in-memory arrays, Python code, MNIST IDX files, image folders and CSV files."""

import csv
import gzip
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from mskernel_data.api import (
    CSVDataset, DatasetError, GeneratorDataset, ImageFolderDataset, MnistDataset,
    NumpySlicesDataset, Shuffle, vision,
)
from mskernel_data.idx import read_idx

import pipeline_fns
from data_files import write_idx, write_mnist

FASHION_MNIST = Path("/usr/share/datasets/fashion-mnist")


def numpy_rows(ds, **kwargs):
    return list(ds.create_tuple_iterator(output_numpy=True, **kwargs))


def column(ds, index=0):
    return [r[index].item() for r in numpy_rows(ds)]


# -- NumpySlicesDataset ---------------------------------------------------------------------


def test_numpy_slices_from_a_dict_tuple_and_list():
    ds = NumpySlicesDataset({"a": np.arange(4), "b": np.arange(4) * 2.0}, shuffle=False)
    assert ds.get_col_names() == ["a", "b"]
    assert [(a.item(), b.item()) for a, b in numpy_rows(ds)] == [(i, 2.0 * i) for i in range(4)]
    pair = NumpySlicesDataset(([1, 2], [[1, 1], [2, 2]]), shuffle=False)
    assert pair.get_col_names() == ["column_0", "column_1"]
    assert pair.output_shapes() == [[], [2]]
    listed = NumpySlicesDataset([[1, 2], [3, 4]], column_names=["v"], shuffle=False)
    assert [r[0].tolist() for r in numpy_rows(listed)] == [[1, 2], [3, 4]]


def test_numpy_slices_shuffle_by_default_and_cover_every_row():
    order = column(NumpySlicesDataset(np.arange(50)))
    assert order != list(range(50)) and sorted(order) == list(range(50))


def test_numpy_slices_rows_are_copies():
    data = np.zeros((3, 2))
    row = numpy_rows(NumpySlicesDataset(data, shuffle=False))[0][0]
    row[:] = 7
    assert not data.any()


def test_numpy_slices_reject_columns_of_different_lengths():
    with pytest.raises(DatasetError, match="same length"):
        NumpySlicesDataset((np.arange(3), np.arange(4)))
    with pytest.raises(DatasetError, match="column_names"):
        NumpySlicesDataset((np.arange(3), np.arange(3)), column_names=["only"])


def test_num_samples_and_shards():
    assert NumpySlicesDataset(np.arange(10), num_samples=4).get_dataset_size() == 4
    shards = [NumpySlicesDataset(np.arange(10), num_shards=3, shard_id=k) for k in range(3)]
    assert [s.get_dataset_size() for s in shards] == [4, 4, 4]
    seen = sorted(v for s in shards for v in column(s))
    assert set(seen) == set(range(10)) and len(seen) == 12  # two rows wrap around
    with pytest.raises(DatasetError, match="give both or neither"):
        NumpySlicesDataset(np.arange(10), num_shards=2)
    with pytest.raises(DatasetError, match="shard_id"):
        NumpySlicesDataset(np.arange(10), num_shards=2, shard_id=2)


# -- GeneratorDataset -----------------------------------------------------------------------


def test_generator_from_a_generator_function_runs_again_each_epoch():
    def gen():
        for i in range(3):
            yield np.array(i), np.array([i, i])

    ds = GeneratorDataset(gen, column_names=["x", "y"])
    it = ds.create_tuple_iterator(num_epochs=2, output_numpy=True)
    for _ in range(2):
        assert [r[0].item() for r in it] == [0, 1, 2]
    assert ds.get_dataset_size() == 3


class OnlyIterable:
    def __init__(self, items):
        self.items = items

    def __iter__(self):
        return iter(self.items)


def test_generator_from_an_iterable_with_one_column_and_types():
    ds = GeneratorDataset(OnlyIterable([1, 2, 3]), "x", column_types=["float32"], num_samples=2)
    rows = numpy_rows(ds)
    assert [r[0].item() for r in rows] == [1.0, 2.0] and rows[0][0].dtype == np.float32


def test_generator_random_access_shuffles_by_default():
    ds = GeneratorDataset(pipeline_fns.Squares(20), ["i", "sq"])
    rows = numpy_rows(ds)
    assert all(sq == i * i for i, sq in rows)
    assert [i.item() for i, _ in rows] != list(range(20))


def test_generator_errors_say_what_to_do():
    with pytest.raises(DatasetError, match="generator function"):
        GeneratorDataset((i for i in range(3)), "x")
    with pytest.raises(DatasetError, match="needs column_names"):
        GeneratorDataset(pipeline_fns.Squares(3))
    with pytest.raises(DatasetError, match="shuffle=True.*random-accessible"):
        GeneratorDataset(OnlyIterable([1, 2]), "x", shuffle=True)
    with pytest.raises(DatasetError, match="tuple of 2 for 3 columns"):
        list(GeneratorDataset(pipeline_fns.Squares(3), ["a", "b", "c"]))


def test_an_exception_in_a_generator_names_the_row():
    def gen():
        yield 1
        yield 2
        raise OSError("disk gone")

    with pytest.raises(DatasetError, match="GeneratorDataset source failed on row 2.*disk gone"):
        list(GeneratorDataset(gen, "x"))


# -- MNIST and IDX --------------------------------------------------------------------------


@pytest.mark.parametrize("compress", [False, True])
def test_mnist_reads_idx_files(tmp_path, rng, compress):
    made = write_mnist(tmp_path, rng, train=7, test=3, compress=compress)
    train = MnistDataset(tmp_path, usage="train", shuffle=False)
    assert train.get_col_names() == ["image", "label"] and train.get_dataset_size() == 7
    rows = numpy_rows(train)
    assert rows[0][0].shape == (28, 28, 1) and rows[0][0].dtype == np.uint8
    assert rows[0][1].shape == () and rows[0][1].dtype == np.uint32
    np.testing.assert_array_equal(np.stack([r[0][..., 0] for r in rows]), made["train"][0])
    np.testing.assert_array_equal([r[1] for r in rows], made["train"][1])
    every = numpy_rows(MnistDataset(tmp_path, usage="all", shuffle=False))
    # MindSpore reads the files sorted by name: t10k-* (test) before train-*
    assert [r[1].item() for r in every] == [*made["test"][1], *made["train"][1]]
    assert MnistDataset(tmp_path, shuffle=False).get_dataset_size() == 10


@pytest.mark.parametrize("present", ["train", "test"])
def test_mnist_default_usage_reads_the_part_the_folder_holds(tmp_path, rng, present):
    made = write_mnist(tmp_path, rng, train=5, test=3, compress=False)
    absent = "t10k" if present == "train" else "train"
    for path in tmp_path.glob(f"{absent}-*"):
        path.unlink()
    for usage in (None, "all"):
        rows = numpy_rows(MnistDataset(tmp_path, usage, shuffle=False))
        assert [r[1].item() for r in rows] == list(made[present][1])
    other = "test" if present == "train" else "train"
    with pytest.raises(DatasetError, match=f"no images file.*{absent}-images-idx3-ubyte"):
        MnistDataset(tmp_path, other)


def test_mnist_takes_mindspores_arguments_positionally(tmp_path, rng):
    made = write_mnist(tmp_path, rng, train=6, test=2, compress=False)
    # dataset_dir, usage, num_samples, num_parallel_workers, shuffle, sampler, num_shards, shard_id
    sharded = MnistDataset(tmp_path, "train", None, 1, False, None, 2, 1)
    assert [r[1].item() for r in numpy_rows(sharded)] == list(made["train"][1][1::2])
    picked = MnistDataset(tmp_path, "train", None, 1, None, [4, 0])
    assert [r[1].item() for r in numpy_rows(picked)] == [made["train"][1][4], made["train"][1][0]]


def test_mnist_in_worker_processes_matches_inline(tmp_path, rng):
    write_mnist(tmp_path, rng, train=20, test=1, compress=True)
    inline = numpy_rows(MnistDataset(tmp_path, "train"))
    parallel = numpy_rows(MnistDataset(tmp_path, "train", num_parallel_workers=2))
    assert all(np.array_equal(a[0], b[0]) and a[1] == b[1] for a, b in zip(inline, parallel))


def test_mnist_reports_missing_and_mismatched_files(tmp_path, rng):
    with pytest.raises(DatasetError, match="no images file.*train-images-idx3-ubyte"):
        MnistDataset(tmp_path, "train")
    with pytest.raises(DatasetError, match="no images file.*t10k-images-idx3-ubyte"):
        MnistDataset(tmp_path)
    with pytest.raises(DatasetError, match="is not a folder"):
        MnistDataset(tmp_path / "nothere")
    write_mnist(tmp_path, rng, train=4, test=2, compress=False)
    write_idx(tmp_path / "train-labels-idx1-ubyte", np.zeros(5, np.uint8))
    with pytest.raises(DatasetError, match=r"\(4, 28, 28\).*\(5,\)"):
        MnistDataset(tmp_path, "train")
    with pytest.raises(DatasetError, match="usage"):
        MnistDataset(tmp_path, "validation")


def test_idx_dtypes_round_trip_and_bad_files_are_named(tmp_path, rng):
    for dtype in (np.uint8, np.int8, np.int16, np.int32, np.float32, np.float64):
        data = (rng.standard_normal((3, 4, 2)) * 50).astype(dtype)
        np.testing.assert_array_equal(read_idx(write_idx(tmp_path / "a.idx", data)), data)
    (tmp_path / "bad").write_bytes(b"\x89PNG....")
    with pytest.raises(DatasetError, match="is not an IDX file"):
        read_idx(tmp_path / "bad")
    truncated = write_idx(tmp_path / "cut", np.zeros((4, 4), np.uint8)).read_bytes()[:-3]
    (tmp_path / "cut").write_bytes(gzip.compress(truncated))
    with pytest.raises(DatasetError, match=r"shape \(4, 4\) \(16 bytes.*13 bytes"):
        read_idx(tmp_path / "cut")


@pytest.mark.skipif(not FASHION_MNIST.is_dir(),
                    reason=f"the Fashion-MNIST files are not installed at {FASHION_MNIST}")
def test_real_fashion_mnist():
    test = MnistDataset(FASHION_MNIST, usage="test", shuffle=False)
    assert test.get_dataset_size() == 10000
    assert MnistDataset(FASHION_MNIST, usage="all").get_dataset_size() == 70000
    batch = next(iter(test.batch(10000).create_tuple_iterator(output_numpy=True)))
    images, labels = batch
    assert images.shape == (10000, 28, 28, 1) and images.dtype == np.uint8
    assert np.bincount(labels) .tolist() == [1000] * 10  # the test split is balanced
    assert 60 < images.mean() < 80  # Fashion-MNIST's mean pixel is about 73


# -- ImageFolderDataset ---------------------------------------------------------------------


@pytest.fixture
def image_folder(tmp_path, rng):
    images = {}
    for label, name in enumerate(["cat", "dog"]):
        (tmp_path / name).mkdir()
        for k in range(3):
            pixels = rng.integers(0, 256, (5 + k, 4, 3), dtype=np.uint8)
            Image.fromarray(pixels).save(tmp_path / name / f"{k}.png")
            images[(label, k)] = pixels
    (tmp_path / "dog" / "notes.txt").write_text("not an image")
    (tmp_path / "dog" / ".hidden.png").write_bytes(b"")
    return tmp_path, images


def test_image_folder_labels_by_sorted_folder_and_decodes(image_folder):
    root, images = image_folder
    ds = ImageFolderDataset(root, extensions=[".PNG"], shuffle=False, decode=True)
    rows = numpy_rows(ds)
    assert [r[1].item() for r in rows] == [0, 0, 0, 1, 1, 1] and rows[0][1].dtype == np.int32
    for k, (image, label) in enumerate(rows):
        np.testing.assert_array_equal(image, images[(int(label), k % 3)])


def test_image_folder_gives_bytes_to_decode_in_a_map(image_folder):
    root, images = image_folder
    ds = ImageFolderDataset(root, extensions=[".png"], shuffle=False, num_parallel_workers=2,
                            class_indexing={"dog": 5})
    raw = numpy_rows(ds)
    assert raw[0][0].ndim == 1 and raw[0][0].dtype == np.uint8 and len(raw) == 3
    decoded = numpy_rows(ds.map(vision.Decode(), input_columns="image"))
    np.testing.assert_array_equal(decoded[0][0], images[(1, 0)])
    assert decoded[0][1] == 5


def test_image_folder_without_extensions_reads_every_file(image_folder):
    root, _ = image_folder
    ds = ImageFolderDataset(root, shuffle=False)
    assert ds.get_dataset_size() == 7  # notes.txt too; hidden files never
    with pytest.raises(DatasetError, match="operation 1 of 1 .Decode.*cannot decode"):
        list(ds.map(vision.Decode(), input_columns="image"))


# -- CSVDataset -----------------------------------------------------------------------------


def write_csv(path, rows):
    with open(path, "w", newline="") as f:
        csv.writer(f).writerows(rows)
    return str(path)


def test_csv_with_header_gives_string_scalars(tmp_path):
    path = write_csv(tmp_path / "a.csv", [["name", "score"], ["ann", "1.5"], ["bob, jr", "2"]])
    ds = CSVDataset(path, shuffle=False)
    assert ds.get_col_names() == ["name", "score"]
    rows = numpy_rows(ds)
    assert [(n.item(), s.item()) for n, s in rows] == [("ann", "1.5"), ("bob, jr", "2")]
    assert rows[0][0].shape == ()
    assert [type(v) for v in next(iter(ds))] == [np.ndarray, np.ndarray]  # strings stay NumPy


def test_csv_defaults_type_and_fill_columns(tmp_path):
    a = write_csv(tmp_path / "a.csv", [["1", "", "x"], ["2", "0.5", ""]])
    b = write_csv(tmp_path / "b.csv", [["3", "1.5", "z"]])
    ds = CSVDataset(str(tmp_path / "*.csv"), column_defaults=[0, 9.0, "none"],
                    column_names=["i", "f", "s"], shuffle=False)
    rows = [[v.item() for v in r] for r in numpy_rows(ds)]
    assert rows == [[1, 9.0, "x"], [2, 0.5, "none"], [3, 1.5, "z"]]
    types = ds.output_types()
    assert types[0] == np.int32 and types[1] == np.float32 and types[2].kind == "U"
    assert ds.get_dataset_size() == 3
    by_files = CSVDataset([b, a], column_defaults=[0, 0.0, ""], column_names=["i", "f", "s"],
                          shuffle=Shuffle.FILES)
    orders = {tuple(column(by_files)) for _ in range(8)}
    assert orders <= {(1, 2, 3), (3, 1, 2)} and len(orders) == 2


def test_csv_errors_name_file_line_and_column(tmp_path):
    path = write_csv(tmp_path / "a.csv", [["a", "b"], ["1", "2"], ["3"]])
    with pytest.raises(DatasetError, match=r"a.csv, line 3: 1 fields, expected 2"):
        list(CSVDataset(path, shuffle=False))
    bad = write_csv(tmp_path / "b.csv", [["1", "oops"]])
    with pytest.raises(DatasetError, match="column 'b': 'oops' is not a valid int"):
        list(CSVDataset(bad, column_defaults=[0, 0], column_names=["a", "b"], shuffle=False))
    with pytest.raises(DatasetError, match="no file"):
        CSVDataset(str(tmp_path / "missing*.csv"))
