"""Batch, shuffle, repeat, take, skip, zip, concat, project, rename; iterators and sizes."""

import numpy as np
import pytest

import mskernel
from mskernel_data.api import DatasetError, GeneratorDataset, NumpySlicesDataset, config, zip


def ordered(n=10, **columns):
    data = {"x": np.arange(n), **columns}
    return NumpySlicesDataset(data, shuffle=False)


def values(ds, col=0):
    return [r[col].tolist() for r in ds.create_tuple_iterator(output_numpy=True)]


def test_batch_stacks_columns_and_keeps_or_drops_the_remainder():
    ds = ordered(7, y=np.arange(7 * 2).reshape(7, 2))
    kept = list(ds.batch(3).create_tuple_iterator(output_numpy=True))
    assert [b[0].tolist() for b in kept] == [[0, 1, 2], [3, 4, 5], [6]]
    assert kept[0][1].shape == (3, 2)
    assert values(ds.batch(3, drop_remainder=True)) == [[0, 1, 2], [3, 4, 5]]
    assert ds.batch(3).get_dataset_size() == 3
    assert ds.batch(3, drop_remainder=True).get_dataset_size() == 2
    with pytest.raises(DatasetError, match="batch_size"):
        ds.batch(0)


def test_batching_rows_of_different_shapes_names_the_column():
    ragged = GeneratorDataset(lambda: (np.zeros(k) for k in (2, 2, 3)), "v")
    with pytest.raises(DatasetError, match=r"batch 0: column 'v' has rows of different "
                                           r"shapes \[\(2,\), \(3,\)\]"):
        list(ragged.batch(3))


def test_shuffle_permutes_reshuffles_each_epoch_and_follows_the_seed():
    ds = ordered(40).shuffle(40)
    it = ds.create_tuple_iterator(num_epochs=2, output_numpy=True)
    first, second = ([r[0].item() for r in it] for _ in range(2))
    assert sorted(first) == list(range(40)) and first != list(range(40)) and first != second
    config.set_seed(11)
    a = values(ordered(40).shuffle(40))
    config.set_seed(11)
    assert values(ordered(40).shuffle(40)) == a
    config.set_seed(12)
    assert values(ordered(40).shuffle(40)) != a


def test_a_small_shuffle_buffer_moves_rows_only_locally():
    out = values(ordered(100).shuffle(4))
    assert sorted(out) == list(range(100))
    assert all(out.index(v) >= v - 3 for v in range(100))  # a row leaves after <= 3 later ones


def test_repeat_passes_are_shuffled_differently():
    ds = NumpySlicesDataset(np.arange(6)).repeat(3)
    out = values(ds)
    passes = [out[k:k + 6] for k in (0, 6, 12)]
    assert all(sorted(p) == list(range(6)) for p in passes) and len({tuple(p) for p in passes}) > 1
    assert ds.get_dataset_size() == 18
    endless = ordered(3).repeat()
    assert endless.get_dataset_size() == -1
    assert values(endless.take(7)) == [0, 1, 2, 0, 1, 2, 0]
    assert values(ordered(3).skip(3).repeat()) == []  # an endless repeat of nothing ends


def test_take_skip_project_rename():
    ds = ordered(10, y=np.arange(10) * 3)
    assert values(ds.skip(7)) == [7, 8, 9] and ds.skip(7).get_dataset_size() == 3
    assert values(ds.take(2)) == [0, 1] and ds.take(20).get_dataset_size() == 10
    projected = ds.project(["y", "x"])
    assert projected.get_col_names() == ["y", "x"] and values(projected)[:2] == [0, 3]
    renamed = ds.rename("x", "index")
    assert renamed.get_col_names() == ["index", "y"]
    with pytest.raises(DatasetError, match="no column 'z'; the columns are"):
        ds.project("z")
    with pytest.raises(DatasetError, match="repeat a column"):
        ds.rename("x", "y")


def test_zip_and_concat():
    a, b = ordered(5), ordered(3).rename("x", "y")
    both = zip((a, b))
    assert both.get_col_names() == ["x", "y"] and both.get_dataset_size() == 3
    assert [r for r in both.create_tuple_iterator(output_numpy=True)][2][1] == 2
    joined = a + ordered(2)
    assert values(joined) == [0, 1, 2, 3, 4, 0, 1] and joined.get_dataset_size() == 7
    with pytest.raises(DatasetError, match="appear in more than one"):
        a.zip(a)
    with pytest.raises(DatasetError, match="same columns"):
        a.concat(b)


def test_the_same_dataset_twice_in_a_pipeline_runs_independently():
    ds = NumpySlicesDataset(np.arange(8))
    pairs = ds.zip(ds.rename("column_0", "other"))
    rows = list(pairs.create_tuple_iterator(output_numpy=True))
    assert len(rows) == 8 and any(a != b for a, b in rows)  # two nodes, two shuffles


def test_map_replaces_columns_in_place_and_can_change_their_number():
    ds = ordered(4, y=np.arange(4) * 10, z=np.arange(4) * 100)
    split = ds.map(lambda y: (y, y + 1), input_columns="y", output_columns=["y0", "y1"])
    assert split.get_col_names() == ["x", "y0", "y1", "z"]
    assert next(iter(split.create_tuple_iterator(output_numpy=True)))[2] == 1
    merged = ds.map(lambda x, z: x + z, input_columns=["x", "z"], output_columns="s")
    assert merged.get_col_names() == ["s", "y"] and values(merged) == [0, 101, 202, 303]
    with pytest.raises(DatasetError, match="returned 2 columns for 1 output"):
        list(ds.map(lambda y: (y, y), input_columns="y"))
    with pytest.raises(DatasetError, match="clash"):
        ds.map(abs, input_columns="x", output_columns="y")
    with pytest.raises(DatasetError, match="callable"):
        ds.map([])


def test_iterators_give_tensors_by_default_and_dicts_on_request():
    ds = ordered(3, f=np.ones((3, 2), np.float32))
    row = next(iter(ds))
    assert isinstance(row, list) and isinstance(row[1], mskernel.Tensor)
    assert row[1].dtype == mskernel.float32 and row[1].shape == (2,)
    as_dict = next(iter(ds.create_dict_iterator(output_numpy=True)))
    assert set(as_dict) == {"x", "f"} and isinstance(as_dict["f"], np.ndarray)
    only = next(iter(ds.create_tuple_iterator(columns=["f"], output_numpy=True)))
    assert len(only) == 1 and only[0].shape == (2,)


def test_an_iterator_runs_its_epochs_then_stops():
    it = ordered(2).create_tuple_iterator(num_epochs=2, output_numpy=True)
    assert [len(list(it)) for _ in range(3)] == [2, 2, 0]
    endless = ordered(2).create_tuple_iterator(output_numpy=True)
    assert [len(list(endless)) for _ in range(3)] == [2, 2, 2]
    endless.stop()
    assert list(endless) == []
    with pytest.raises(ValueError, match="num_epochs"):
        ordered(2).create_tuple_iterator(num_epochs=0)


def test_shapes_and_types_come_from_the_first_row_without_using_an_epoch():
    ds = ordered(5, img=np.zeros((5, 4, 4, 3), np.uint8)).shuffle(5).batch(2)
    assert ds.output_shapes() == [[2], [2, 4, 4, 3]]
    assert ds.output_types() == [np.int64, np.uint8]
    fresh = ordered(5, img=np.zeros((5, 4, 4, 3), np.uint8)).shuffle(5).batch(2)
    assert values(ds) == values(fresh)  # the probe did not advance the epoch
    with pytest.raises(DatasetError, match="no rows"):
        ordered(2).skip(5).output_shapes()
