"""The plugin as the core sees it: discovered from its entry point, healthy, providing the
``mskernel.dataset`` and ``mskernel.mindrecord`` namespaces with MindSpore's names, and cheap
to import."""

import subprocess
import sys

import mskernel
from mskernel.hooks import plugin_host


def test_plugin_record_is_ok():
    (record,) = [r for r in plugin_host().plugin_records() if r.name == "data"]
    assert record.status == "ok", record.reason
    assert record.distribution == "mskernel-data"
    assert record.provides == ["namespace:dataset", "namespace:mindrecord"]


def test_namespace_is_the_api_module_with_mindspore_names():
    from mskernel_data import api

    assert mskernel.dataset is api
    for name in ("NumpySlicesDataset", "GeneratorDataset", "MnistDataset", "ImageFolderDataset",
                 "CSVDataset", "MindDataset", "Shuffle", "SequentialSampler", "zip"):
        assert hasattr(mskernel.dataset, name), name
    for name in ("Resize", "RandomCrop", "RandomHorizontalFlip", "Normalize", "HWC2CHW",
                 "RandomRotation", "Rescale", "ToTensor", "Decode", "AutoAugment",
                 "RandomSelectSubpolicy", "Inter", "Border"):
        assert hasattr(mskernel.dataset.vision, name), name
    for name in ("Compose", "TypeCast", "OneHot", "RandomApply", "RandomChoice"):
        assert hasattr(mskernel.dataset.transforms, name), name
    for name in ("set_seed", "get_seed", "set_num_parallel_workers", "set_prefetch_size",
                 "set_multiprocessing_start_method"):
        assert hasattr(mskernel.dataset.config, name), name
    for name in ("BasicTokenizer", "Vocab", "Lookup"):
        assert hasattr(mskernel.dataset.text, name), name


def test_mindrecord_namespace_is_the_mindrecord_package():
    import mskernel.mindrecord as mindrecord  # noqa: PLC0415 - the import is the test
    from mskernel_data import mindrecord as package  # noqa: PLC0415

    assert mindrecord is package
    assert mindrecord.FileWriter.__module__ == "mskernel_data.mindrecord.writer"


def test_loading_the_plugin_imports_neither_pillow_nor_the_pipeline():
    probe = ("import sys, mskernel_data.plugin; "
             "print(sorted(m for m in sys.modules if m.startswith(('mskernel_data', 'PIL'))))")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                         check=True).stdout
    assert eval(out) == ["mskernel_data", "mskernel_data.plugin"]
