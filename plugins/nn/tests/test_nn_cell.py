"""Cell mechanics: registration, naming, traversal, freezing, modes, and cells under @jit and
autodiff."""

from __future__ import annotations

from collections import OrderedDict

import numpy as np
import pytest

import mskernel
from mskernel import Parameter, Tensor
from mskernel_sdk import assert_close
from mskernel_nn.cell import Cell
from mskernel_nn.layers import CellList, Dense, ReLU, SequentialCell

F32 = mskernel.float32


def _param(*shape: int, fill: float = 1.0) -> Parameter:
    return Parameter(np.full(shape, fill, np.float32))


class Affine(Cell):
    def __init__(self, n: int = 3) -> None:
        super().__init__()
        self.weight = _param(n, n)
        self.bias = _param(n, fill=0.5)

    def construct(self, x):
        return mskernel.ops.matmul(x, self.weight) + self.bias


class Block(Cell):
    def __init__(self) -> None:
        super().__init__()
        self.first = Affine()
        self.gain = _param(3, fill=2.0)
        self.second = Affine()

    def construct(self, x):
        return self.second(self.first(x) * self.gain)


class Net(Cell):
    def __init__(self) -> None:
        super().__init__()
        self.features = Block()
        self.head = Affine()

    def construct(self, x):
        return mskernel.ops.sum(self.head(self.features(x)))


def test_parameters_are_named_after_their_dotted_paths_cell_by_cell():
    net = Net()
    names = [name for name, _ in net.parameters_and_names()]
    # each cell's own parameters, then its children's (MindSpore's and PyTorch's order)
    assert names == ["features.gain", "features.first.weight", "features.first.bias",
                     "features.second.weight", "features.second.bias", "head.weight",
                     "head.bias"]
    assert [p.name for p in net.get_parameters()] == names
    assert list(net.parameters_dict()) == names
    assert next(net.parameters_and_names(name_prefix="net"))[0] == "net.features.gain"


def test_names_are_stable_across_constructions():
    first = [p.name for p in Net().get_parameters()]
    assert [p.name for p in Net().get_parameters()] == first


def test_attaching_a_cell_renames_its_parameters():
    block = Block()
    assert block.first.weight.name == "first.weight"
    outer = Cell()
    outer.inner = block
    assert block.first.weight.name == "inner.first.weight"
    block.late = _param(2)  # added after attachment: named under the cell's path
    assert block.late.name == "inner.late"


def test_cells_and_names_and_children():
    net = Net()
    assert [n for n, _ in net.cells_and_names()] == [
        "", "features", "features.first", "features.second", "head"]
    assert list(net.name_cells()) == ["features", "head"]
    assert [type(c).__name__ for c in net.cells()] == ["Block", "Affine"]


def test_shared_parameters_and_cells_are_listed_once():
    net = Cell()
    shared = Affine()
    net.a = shared
    net.b = shared
    net.tied = shared.weight
    assert [n for n, _ in net.cells_and_names()] == ["", "a"]
    assert [n for n, _ in net.parameters_and_names()] == ["tied", "a.bias"]


def test_freezing_moves_a_parameter_between_trainable_and_untrainable():
    net = Net()
    net.head.weight.requires_grad = False
    assert all(p is not net.head.weight for p in net.trainable_params())
    assert [p.name for p in net.untrainable_params()] == ["head.weight"]
    assert len(net.trainable_params()) == 6
    assert [p.name for p in net.features.trainable_params(recurse=False)] == ["features.gain"]


def test_set_train_reaches_every_cell_and_defaults_to_inference():
    net = Net()
    assert not any(c.training for _, c in net.cells_and_names())
    assert net.set_train() is net
    assert all(c.training for _, c in net.cells_and_names())
    net.set_train(False)
    assert not net.features.first.training


def test_apply_visits_children_before_parents():
    seen = []
    Net().apply(lambda cell: seen.append(type(cell).__name__))
    assert seen == ["Affine", "Affine", "Block", "Affine", "Net"]


def test_setting_none_unregisters_and_tensors_are_refused():
    cell = Affine()
    with pytest.raises(TypeError, match="assign_value"):
        cell.bias = Tensor(np.zeros(3, np.float32))
    cell.bias = None
    assert cell.bias is None
    assert [n for n, _ in cell.parameters_and_names()] == ["weight"]
    del cell.weight
    assert list(cell.get_parameters()) == []


def test_registration_errors_are_explained():
    class Forgetful(Cell):
        def __init__(self):
            self.w = _param(1)

    with pytest.raises(AttributeError, match="super"):
        Forgetful()
    cell = Cell()
    with pytest.raises(KeyError, match="'.'"):
        cell.insert_param_to_cell("a.b", _param(1))
    with pytest.raises(TypeError, match="Parameter"):
        cell.insert_param_to_cell("w", Tensor(np.zeros(1, np.float32)))
    block = Block()
    with pytest.raises(ValueError, match="contains"):
        block.first.insert_child_to_cell("loop", block)
    with pytest.raises(NotImplementedError, match="construct"):
        Cell()(1)
    with pytest.raises(AttributeError, match="no attribute 'missing'"):
        _ = cell.missing


def test_repr_shows_the_tree():
    text = repr(Block())
    assert text.splitlines()[0] == "Block<"
    assert "(first): Affine<>" in text


def _inputs() -> Tensor:
    return Tensor(np.arange(6, dtype=np.float32).reshape(2, 3) / 6)


def test_a_jitted_cell_equals_eager_and_reads_parameter_updates():
    net = Net()
    x = _inputs()
    compiled = mskernel.jit(net)
    assert_close(compiled(x), net(x), F32)
    net.head.bias.assign_value(np.full(3, -1.0, np.float32))
    assert_close(compiled(x), net(x), F32)  # parameters are graph state, not constants
    assert compiled.cache_info().misses == 1


def test_user_construct_control_flow_is_converted_inside_jit():
    class Gate(Cell):
        def __init__(self):
            super().__init__()
            self.inner = Affine()

        def construct(self, x):
            y = self.inner(x)
            if mskernel.ops.sum(y) > 0:
                y = y * 2.0
            else:
                y = -y
            return y

    class Outer(Cell):
        def __init__(self):
            super().__init__()
            self.gate = Gate()

        def construct(self, x):
            return self.gate(x)

    outer = Outer()
    compiled = mskernel.jit(outer)
    for sign in (1.0, -1.0):
        x = Tensor(sign * np.ones((2, 3), np.float32))
        assert_close(compiled(x), outer(x), F32)


def test_gradients_with_respect_to_trainable_parameters_eager_and_jit():
    net = Net()
    params = net.trainable_params()
    step = mskernel.value_and_grad(net, None, weights=params)
    x = _inputs()
    loss, grads = step(x)
    jit_loss, jit_grads = mskernel.jit(step)(x)
    assert_close(jit_loss, loss, F32)
    for g, jg, p in zip(grads, jit_grads, params):
        assert g.shape == p.shape
        assert_close(jg, g, F32)
    # d(sum(head(h)))/d(head.bias) is the batch size for every output
    assert_close(grads[-1], np.full(3, 2.0, np.float32), F32)


def test_a_jitted_step_assigns_parameters_in_place():
    net = Affine()

    @mskernel.jit
    def step(x):
        loss, grads = mskernel.value_and_grad(
            lambda v: mskernel.ops.sum(net(v)), None, weights=[net.weight, net.bias])(x)
        for p, g in zip([net.weight, net.bias], grads):
            p.assign_value(p - 0.1 * g)
        return loss

    reference = Affine()
    x = _inputs()
    for _ in range(2):
        step(x)
        _, grads = mskernel.value_and_grad(
            lambda v: mskernel.ops.sum(reference(v)), None,
            weights=[reference.weight, reference.bias])(x)
        for p, g in zip([reference.weight, reference.bias], grads):
            p.assign_value(p - 0.1 * g)
    assert_close(net.weight, reference.weight, F32)
    assert_close(net.bias, reference.bias, F32)


# -- containers -------------------------------------------------------------------------------

def test_sequential_cell_names_by_position_or_key_and_applies_in_order():
    seq = SequentialCell(Dense(3, 4), ReLU(), Dense(4, 2))
    assert [n for n, _ in seq.parameters_and_names()] == ["0.weight", "0.bias", "2.weight",
                                                          "2.bias"]
    x = _inputs()
    expected = seq[2](seq[1](seq[0](x)))
    assert_close(seq(x), expected, F32)
    assert_close(mskernel.jit(seq)(x), expected, F32)
    named = SequentialCell(OrderedDict([("fc", Dense(3, 2)), ("act", ReLU())]))
    assert [n for n, _ in named.parameters_and_names()] == ["fc.weight", "fc.bias"]
    assert SequentialCell([ReLU(), ReLU()]).name_cells().keys() == {"0", "1"}


def test_a_slice_shares_cells_without_renaming_them():
    outer = Cell()
    outer.features = SequentialCell(Dense(3, 3), ReLU(), Dense(3, 3))
    head = outer.features[1:]
    assert isinstance(head, SequentialCell) and len(head) == 2
    assert list(head.name_cells()) == ["1", "2"]
    assert outer.features[2].weight.name == "features.2.weight"
    assert head[1] is outer.features[2]


def test_cell_list_registers_and_renumbers():
    cells = CellList([Dense(2, 2), Dense(2, 2)])
    cells.append(Dense(2, 3))
    cells.insert(0, ReLU())
    assert [n for n, _ in cells.parameters_and_names()] == [
        "1.weight", "1.bias", "2.weight", "2.bias", "3.weight", "3.bias"]
    del cells[0]
    assert cells[2].weight.name == "2.weight" and len(cells) == 3
    cells[0] = ReLU()
    assert next(cells.parameters_and_names())[0] == "1.weight"
    with pytest.raises(IndexError):
        cells[5]
    with pytest.raises(TypeError, match="holds only Cells"):
        cells.append(lambda x: x)
    with pytest.raises(TypeError, match="not callable"):
        cells(_inputs())


def test_nested_containers_in_a_user_cell_under_jit_and_grad():
    class Tower(Cell):
        def __init__(self):
            super().__init__()
            self.blocks = CellList([SequentialCell(Dense(3, 3), ReLU()) for _ in range(2)])
            self.head = Dense(3, 1)

        def construct(self, x):
            for block in self.blocks:
                x = block(x)
            return mskernel.ops.sum(self.head(x))

    tower = Tower()
    assert [n for n, _ in tower.parameters_and_names()][:2] == ["blocks.0.0.weight",
                                                               "blocks.0.0.bias"]
    params = tower.trainable_params()
    step = mskernel.value_and_grad(tower, None, weights=params)
    loss, grads = step(_inputs())
    jit_loss, jit_grads = mskernel.jit(step)(_inputs())
    assert_close(jit_loss, loss, F32)
    for g, jg in zip(grads, jit_grads):
        assert_close(jg, g, F32)


def test_the_nn_namespace_is_registered():
    from mskernel_nn import api

    assert mskernel.nn is api
    assert mskernel.nn.Cell is Cell
    assert [name for name in api.__all__ if not hasattr(api, name)] == []


def test_a_jitted_cell_follows_train_and_inference_mode_with_one_compile_each():
    from mskernel_nn.layers import Dropout

    net = SequentialCell([Dense(8, 8), Dropout(p=0.5)])
    step = mskernel.jit(net)
    x = Tensor(np.ones((4, 8), np.float32))
    inference = net(x).numpy()
    assert_close(step(x).numpy(), inference, F32)
    net.set_train(True)
    dropped = step(x).numpy()
    assert (dropped == 0).any() and not np.allclose(dropped, inference)
    net.set_train(False)
    assert_close(step(x).numpy(), inference, F32)
    net[1].training = True  # one sub-cell switched by attribute: a third configuration
    assert (step(x).numpy() == 0).any()
    assert step.cache_info() == (1, 3, 3)  # (hits, misses, size): back to inference hit
