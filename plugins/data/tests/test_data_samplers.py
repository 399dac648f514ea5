"""Samplers: the rows MindSpore 2.10's samplers choose (the expected orders below were read
from MindSpore itself on a 10-row NumpySlicesDataset), seeded randomness, and the errors."""

import numpy as np
import pytest

from mskernel_data import config
from mskernel_data.api import (
    DatasetError, DistributedSampler, GeneratorDataset, NumpySlicesDataset, RandomSampler,
    Sampler, SequentialSampler, SubsetRandomSampler, SubsetSampler, WeightedRandomSampler,
)


def rows(sampler, n=10, **kwargs):
    ds = NumpySlicesDataset({"x": np.arange(n)}, sampler=sampler, **kwargs)
    out = [r[0].item() for r in ds.create_tuple_iterator(output_numpy=True, num_epochs=1)]
    assert ds.get_dataset_size() == len(out)
    return out


class EveryThird(Sampler):
    def __iter__(self):
        yield from range(0, self.dataset_size, 3)


@pytest.mark.parametrize("sampler, expected", [
    (SequentialSampler(start_index=3, num_samples=4), [3, 4, 5, 6]),
    (SequentialSampler(start_index=8), [8, 9]),
    (SubsetSampler([5, 1, 9, 1], num_samples=3), [5, 1, 9]),
    (DistributedSampler(3, 1, shuffle=False), [1, 4, 7, 0]),
    ([3, 4, 5], [3, 4, 5]),
    (EveryThird(), [0, 3, 6, 9]),
    (EveryThird(num_samples=2), [0, 3]),
])
def test_deterministic_samplers_choose_mindspores_rows(sampler, expected):
    assert rows(sampler) == expected


def test_random_samplers_draw_from_the_seed_and_redraw_each_epoch():
    def epochs(sampler):
        ds = NumpySlicesDataset({"x": np.arange(10)}, sampler=sampler)
        it = ds.create_tuple_iterator(output_numpy=True, num_epochs=2)
        return [[r[0].item() for r in it] for _ in range(2)]

    config.set_seed(7)
    first, second = epochs(RandomSampler(num_samples=4))
    assert len(first) == 4 and len(set(first)) == 4 and first != second
    config.set_seed(7)
    assert epochs(RandomSampler(num_samples=4)) == [first, second]
    drawn = rows(RandomSampler(replacement=True, num_samples=12))
    assert len(drawn) == 10  # MindSpore caps num_samples at the source's size
    subset = rows(SubsetRandomSampler([2, 4, 6, 8]))
    assert sorted(subset) == [2, 4, 6, 8]
    weighted = rows(WeightedRandomSampler([0, 0, 1, 0, 0, 0, 0, 0, 0, 1], num_samples=50))
    assert set(weighted) == {2, 9} and len(weighted) == 50
    once = rows(WeightedRandomSampler([1, 1, 0, 1], num_samples=3, replacement=False))
    assert sorted(once) == [0, 1, 3]


def test_distributed_shards_cover_the_dataset_with_one_shuffle():
    shards = [rows(DistributedSampler(3, k, shuffle=True)) for k in range(3)]
    assert all(len(s) == 4 for s in shards)
    assert set(sum(shards, [])) == set(range(10))


def test_a_sampler_reads_in_workers_like_inline():
    data = list(range(30))
    inline = GeneratorDataset(data, "x", sampler=SubsetRandomSampler(range(0, 30, 2)),
                              python_multiprocessing=False)
    threads = GeneratorDataset(data, "x", sampler=SubsetRandomSampler(range(0, 30, 2)),
                               num_parallel_workers=3, python_multiprocessing=False)
    assert [r[0].item() for r in inline] == [r[0].item() for r in threads]


@pytest.mark.parametrize("kwargs", [{"shuffle": True}, {"num_samples": 3},
                                    {"num_shards": 2, "shard_id": 0}])
def test_a_sampler_does_not_go_with_the_built_in_sampling(kwargs):
    with pytest.raises(DatasetError, match=f"sampler.*{next(iter(kwargs))}"):
        NumpySlicesDataset({"x": np.arange(10)}, sampler=SequentialSampler(), **kwargs)


def test_bad_samplers_are_named():
    with pytest.raises(DatasetError, match="SubsetSampler chose row 12 of a source with 10"):
        rows(SubsetSampler([1, 12]))
    with pytest.raises(DatasetError, match="start_index 10 is past"):
        rows(SequentialSampler(start_index=10))
    with pytest.raises(DatasetError, match="shard_id must lie in"):
        DistributedSampler(2, 2)
    with pytest.raises(DatasetError, match="weights"):
        WeightedRandomSampler([0, 0])
    with pytest.raises(DatasetError, match="sequence of row indices"):
        NumpySlicesDataset({"x": np.arange(3)}, sampler="all")
    with pytest.raises(DatasetError, match="needs a random-accessible source"):
        GeneratorDataset(lambda: iter(range(3)), "x", sampler=[0, 1])

    class Forgot(Sampler):
        pass

    with pytest.raises(DatasetError, match="Forgot must implement __iter__"):
        rows(Forgot())
