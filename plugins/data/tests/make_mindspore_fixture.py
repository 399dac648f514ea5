"""Write ``fixtures/mindspore_mindrecord.tar.gz`` with MindSpore's own writer::

    python3.11 -m venv /tmp/msenv && /tmp/msenv/bin/pip install mindspore==2.10.0 'numpy<2'
    /tmp/msenv/bin/python plugins/data/tests/make_mindspore_fixture.py
"""

import tarfile
import tempfile
from pathlib import Path

from mindspore.mindrecord import FileWriter

import mindrecord_rows

HERE = Path(__file__).resolve().parent

if __name__ == "__main__":
    with tempfile.TemporaryDirectory() as folder:
        mindrecord_rows.write(FileWriter, folder)
        with tarfile.open(HERE / "fixtures" / "mindspore_mindrecord.tar.gz", "w:gz") as tar:
            for path in sorted(Path(folder).iterdir()):
                tar.add(path, arcname=path.name)
