"""Containers: ``SequentialCell`` (cells applied in order) and ``CellList`` (a list of cells
that registers them).  Children are named by position, ``"0"``, ``"1"`` … (or by the keys of
an ``OrderedDict`` given to ``SequentialCell``), so their parameters are ``"0.weight"`` …;
removing or inserting a cell renumbers the cells after it (and renames their parameters)."""

from __future__ import annotations

from collections import OrderedDict
from typing import Any, Iterable, Iterator, Union

from ..cell import Cell

__all__ = ["CellList", "SequentialCell"]


def _checked(cell: Any, where: str) -> Cell:
    if not isinstance(cell, Cell):
        raise TypeError(f"{where} holds only Cells, got {type(cell).__name__}")
    return cell


class _CellSequence(Cell):
    """The list behaviour both containers share."""

    def __init__(self, cells: Iterable[Cell] = ()) -> None:
        super().__init__()
        self.extend(cells)

    def _renumber(self, cells: list[Cell]) -> None:
        self._cells.clear()
        for i, cell in enumerate(cells):
            self.insert_child_to_cell(str(i), cell)

    def _index(self, index: int) -> int:
        n = len(self._cells)
        if not -n <= index < n:
            raise IndexError(f"index {index} is out of range for {type(self).__name__} of "
                             f"length {n}")
        return index % n

    def __len__(self) -> int:
        return len(self._cells)

    def __iter__(self) -> Iterator[Cell]:
        return iter(list(self._cells.values()))

    def __getitem__(self, index: Union[int, slice]) -> Any:
        """The cell at ``index``; a slice is a container of the same type holding those
        cells under their keys, their parameters keeping their names."""
        if isinstance(index, slice):
            view = type(self).__new__(type(self))
            Cell.__init__(view)
            view._cells.update(list(self._cells.items())[index])
            return view
        return list(self._cells.values())[self._index(index)]

    def __setitem__(self, index: int, cell: Cell) -> None:
        key = list(self._cells)[self._index(index)]
        self.insert_child_to_cell(key, _checked(cell, type(self).__name__))

    def __delitem__(self, index: Union[int, slice]) -> None:
        cells = list(self._cells.values())
        if isinstance(index, slice):
            del cells[index]
        else:
            del cells[self._index(index)]
        self._renumber(cells)

    def append(self, cell: Cell) -> None:
        """Add ``cell`` at the end."""
        self.insert_child_to_cell(str(len(self._cells)), _checked(cell, type(self).__name__))

    def extend(self, cells: Iterable[Cell]) -> None:
        """Add ``cells`` at the end, in order."""
        for cell in cells:
            self.append(cell)

    def insert(self, index: int, cell: Cell) -> None:
        """Insert ``cell`` before position ``index``."""
        cells = list(self._cells.values())
        cells.insert(index, _checked(cell, type(self).__name__))
        self._renumber(cells)


class SequentialCell(_CellSequence):
    """Cells applied one after the other: ``SequentialCell(a, b, c)(x) == c(b(a(x)))``.
    Takes cells, one list of cells, or one ``OrderedDict`` of named cells."""

    def __init__(self, *args: Any) -> None:
        if len(args) == 1 and isinstance(args[0], OrderedDict):
            super().__init__()
            for name, cell in args[0].items():
                self.insert_child_to_cell(name, _checked(cell, "SequentialCell"))
            return
        cells = args[0] if len(args) == 1 and isinstance(args[0], list) else args
        super().__init__(cells)

    def construct(self, x: Any) -> Any:
        for cell in self._cells.values():
            x = cell(x)
        return x


class CellList(_CellSequence):
    """A list of cells, registered as children (``CellList([a, b])``); iterate over it in
    ``construct``."""

    def __init__(self, args: Iterable[Cell] = ()) -> None:
        super().__init__(args)

    def construct(self, *inputs: Any) -> Any:
        raise TypeError("a CellList is not callable; iterate over its cells in construct")
