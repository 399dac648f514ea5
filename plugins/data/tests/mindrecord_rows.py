"""The MindRecord datasets of ``fixtures/mindspore_mindrecord.tar.gz``: their schemas and
rows, generated deterministically (NumPy only, so MindSpore's interpreter can run it too).

``write(FileWriter, folder)`` writes all three with the given ``FileWriter`` class; the
fixture holds what MindSpore 2.10.0's writer made of them (``make_mindspore_fixture.py``).
"""

import numpy as np

DATASETS = {
    # every kind of field; two shards; several calls; pages of 32 KiB so rows span pages
    "mixed": dict(
        schema={"file_name": {"type": "string"}, "label": {"type": "int32"},
                "weight": {"type": "float32"}, "score": {"type": "float64"},
                "big": {"type": "int64"}, "image": {"type": "bytes"},
                "mask": {"type": "int32", "shape": [-1]},
                "feature": {"type": "float64", "shape": [2, 3]}},
        shard_num=2, index=["file_name", "label"], calls=(40, 30, 50)),
    # blob fields only: each row's raw part is MindSpore's placeholder
    "blobs": dict(schema={"image": {"type": "bytes"},
                          "pixels": {"type": "int64", "shape": [4, -1]}},
                  shard_num=1, index=None, calls=(25,)),
    # scalar fields only: each row's blob is 4 zero bytes
    "scalars": dict(schema={"name": {"type": "string"}, "value": {"type": "float32"}},
                    shard_num=1, index=None, calls=(10, 10)),
}


def rows(name):
    """The rows of each ``write_raw_data`` call of dataset ``name``."""
    rng = np.random.default_rng(sum(name.encode()))
    calls, start = [], 0
    for count in DATASETS[name]["calls"]:
        calls.append([_row(name, start + i, rng) for i in range(count)])
        start += count
    return calls


def _row(name, i, rng):
    # patterned bytes (the fixture stays small), of lengths that make rows span pages
    image = ((np.arange(int(rng.integers(1, 1500))) * (i + 1)) % 251).astype(np.uint8).tobytes()
    if name == "mixed":
        return {"file_name": f"img_{i:04d}_é.png", "label": int(rng.integers(-5, 10)),
                "weight": float(np.float32(rng.standard_normal())),
                "score": float(rng.standard_normal()), "big": int(rng.integers(-2**62, 2**62)),
                "image": image,
                "mask": (rng.integers(-2**31, 2**31, int(rng.integers(0, 12)), dtype=np.int64)
                         >> int(rng.integers(0, 31))).astype(np.int32),
                "feature": rng.standard_normal((2, 3))}
    if name == "blobs":
        return {"image": image,
                "pixels": rng.integers(-2**40, 2**40, (4, int(rng.integers(1, 5))))}
    return {"name": "n" * int(rng.integers(0, 40)), "value": float(rng.standard_normal())}


def write(file_writer, folder):
    """Write the three datasets into ``folder`` with ``file_writer`` (a FileWriter class)."""
    for name, spec in DATASETS.items():
        writer = file_writer(f"{folder}/{name}.mindrecord", shard_num=spec["shard_num"],
                             overwrite=True)
        writer.set_header_size(1 << 14)
        writer.set_page_size(1 << 15)
        writer.add_schema(spec["schema"], name)
        if spec["index"]:
            writer.add_index(spec["index"])
        for call in rows(name):
            writer.write_raw_data(call)
        writer.commit()


def expected_rows(name):
    """The rows in the order a reader of the whole dataset sees them: each call's rows are
    split between the shards in order, and the shards are read one after the other."""
    shards = DATASETS[name]["shard_num"]
    per_shard = [[] for _ in range(shards)]
    for call in rows(name):
        size, extra = divmod(len(call), shards)
        bounds = np.cumsum([0] + [size + (k < extra) for k in range(shards)])
        for k in range(shards):
            per_shard[k] += call[bounds[k]:bounds[k + 1]]
    return [row for shard in per_shard for row in shard]
