"""``mskernel.mindrecord``: MindSpore's MindRecord format, written and read (MindSpore's
``mindspore.mindrecord`` names).  Read a dataset into a pipeline with
``mskernel.dataset.MindDataset``.

The files are MindSpore's own: what :class:`FileWriter` writes MindSpore reads, and
MindSpore's files read here, shards, index fields and all.  Loading never runs code from a
file and checks every size against the file before it is used.
"""

from .header import Header, Page
from .reader import FileReader
from .schema import Schema
from .writer import FileWriter

__all__ = ["FileReader", "FileWriter", "Header", "Page", "Schema"]
