"""PyTorch migration: a torchvision-style ResNet-18 and a small transformer, written here in
PyTorch and in mskernel.nn with the same structure, go through ``torch.onnx.export`` and the
importer, and their ``state_dict`` maps onto the mskernel cells.  Both routes give PyTorch's
outputs within float32 tolerance."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")
tnn = torch.nn

import mskernel  # noqa: E402
from mskernel_onnx.migration import (  # noqa: E402
    import_torch, load_torch_state_dict, map_state_dict,
)
from torch_helpers import randomise_batch_norm  # noqa: E402

nn = mskernel.nn
RTOL, ATOL = 1e-4, 1e-4  # float32 through ~20 layers of 3x3 convolutions and batch norms


# --- ResNet-18 (torchvision's layout and names) -------------------------------------------------


class TorchBasicBlock(tnn.Module):
    def __init__(self, inplanes: int, planes: int, stride: int = 1) -> None:
        super().__init__()
        self.conv1 = tnn.Conv2d(inplanes, planes, 3, stride, 1, bias=False)
        self.bn1 = tnn.BatchNorm2d(planes)
        self.relu = tnn.ReLU(inplace=True)
        self.conv2 = tnn.Conv2d(planes, planes, 3, 1, 1, bias=False)
        self.bn2 = tnn.BatchNorm2d(planes)
        self.downsample = None
        if stride != 1 or inplanes != planes:
            self.downsample = tnn.Sequential(tnn.Conv2d(inplanes, planes, 1, stride, bias=False),
                                             tnn.BatchNorm2d(planes))

    def forward(self, x):
        identity = x if self.downsample is None else self.downsample(x)
        out = self.relu(self.bn1(self.conv1(x)))
        return self.relu(self.bn2(self.conv2(out)) + identity)


class TorchResNet18(tnn.Module):
    def __init__(self, num_classes: int = 10) -> None:
        super().__init__()
        self.conv1 = tnn.Conv2d(3, 64, 7, 2, 3, bias=False)
        self.bn1 = tnn.BatchNorm2d(64)
        self.relu = tnn.ReLU(inplace=True)
        self.maxpool = tnn.MaxPool2d(3, 2, 1)
        widths = [(64, 64, 1), (64, 128, 2), (128, 256, 2), (256, 512, 2)]
        for i, (inplanes, planes, stride) in enumerate(widths, 1):
            setattr(self, f"layer{i}", tnn.Sequential(TorchBasicBlock(inplanes, planes, stride),
                                                      TorchBasicBlock(planes, planes)))
        self.avgpool = tnn.AdaptiveAvgPool2d((1, 1))
        self.fc = tnn.Linear(512, num_classes)

    def forward(self, x):
        x = self.maxpool(self.relu(self.bn1(self.conv1(x))))
        x = self.layer4(self.layer3(self.layer2(self.layer1(x))))
        return self.fc(torch.flatten(self.avgpool(x), 1))


class BasicBlock(nn.Cell):
    def __init__(self, inplanes: int, planes: int, stride: int = 1) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(inplanes, planes, 3, stride, pad_mode="pad", padding=1)
        self.bn1 = nn.BatchNorm2d(planes)
        self.relu = nn.ReLU()
        self.conv2 = nn.Conv2d(planes, planes, 3, 1, pad_mode="pad", padding=1)
        self.bn2 = nn.BatchNorm2d(planes)
        self.downsample = None
        if stride != 1 or inplanes != planes:
            self.downsample = nn.SequentialCell(nn.Conv2d(inplanes, planes, 1, stride,
                                                          pad_mode="valid"),
                                                nn.BatchNorm2d(planes))

    def construct(self, x):
        identity = x if self.downsample is None else self.downsample(x)
        out = self.relu(self.bn1(self.conv1(x)))
        return self.relu(self.bn2(self.conv2(out)) + identity)


class ResNet18(nn.Cell):
    def __init__(self, num_classes: int = 10) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(3, 64, 7, 2, pad_mode="pad", padding=3)
        self.bn1 = nn.BatchNorm2d(64)
        self.relu = nn.ReLU()
        self.maxpool = nn.MaxPool2d(3, 2, pad_mode="pad", padding=1)
        widths = [(64, 64, 1), (64, 128, 2), (128, 256, 2), (256, 512, 2)]
        for i, (inplanes, planes, stride) in enumerate(widths, 1):
            setattr(self, f"layer{i}", nn.SequentialCell(BasicBlock(inplanes, planes, stride),
                                                         BasicBlock(planes, planes)))
        self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
        self.flatten = nn.Flatten()
        self.fc = nn.Dense(512, num_classes)

    def construct(self, x):
        x = self.maxpool(self.relu(self.bn1(self.conv1(x))))
        x = self.layer4(self.layer3(self.layer2(self.layer1(x))))
        return self.fc(self.flatten(self.avgpool(x)))


# --- a small transformer ------------------------------------------------------------------------


class TorchTransformer(tnn.Module):
    def __init__(self, vocab: int = 50, d_model: int = 32, heads: int = 4, layers: int = 2):
        super().__init__()
        self.embed = tnn.Embedding(vocab, d_model)
        self.position = tnn.Parameter(torch.randn(1, 16, d_model) * 0.1)
        self.encoder = tnn.ModuleList(
            tnn.TransformerEncoderLayer(d_model, heads, 64, dropout=0.0, batch_first=True)
            for _ in range(layers))
        self.norm = tnn.LayerNorm(d_model)
        self.head = tnn.Linear(d_model, vocab)

    def forward(self, ids):
        x = self.embed(ids) + self.position[:, :ids.shape[1]]
        for layer in self.encoder:
            x = layer(x)
        return self.head(self.norm(x))


class Transformer(nn.Cell):
    def __init__(self, vocab: int = 50, d_model: int = 32, heads: int = 4, layers: int = 2):
        super().__init__()
        self.embed = nn.Embedding(vocab, d_model)
        self.position = mskernel.Parameter(np.zeros((1, 16, d_model), np.float32))
        self.encoder = nn.CellList([nn.TransformerEncoderLayer(d_model, heads, 64, dropout=0.0,
                                                               batch_first=True)
                                    for _ in range(layers)])
        self.norm = nn.LayerNorm((d_model,), epsilon=1e-5)
        self.head = nn.Dense(d_model, vocab)

    def construct(self, ids):
        x = self.embed(ids) + self.position[:, :ids.shape[1]]
        for layer in self.encoder:
            x = layer(x)
        return self.head(self.norm(x))


# --- fixtures ----------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def resnet():
    torch.manual_seed(0)
    module = TorchResNet18().eval()
    randomise_batch_norm(module)
    x = np.random.default_rng(0).standard_normal((2, 3, 64, 64)).astype(np.float32)
    with torch.no_grad():
        expected = module(torch.from_numpy(x)).numpy()
    return module, x, expected, import_torch(module, torch.from_numpy(x))


@pytest.fixture(scope="module")
def transformer():
    torch.manual_seed(0)
    module = TorchTransformer().eval()
    ids = np.random.default_rng(0).integers(0, 50, (2, 12)).astype(np.int64)
    with torch.no_grad():
        expected = module(torch.from_numpy(ids)).numpy()
    return module, ids, expected, import_torch(module, torch.from_numpy(ids))


# --- the tests ----------------------------------------------------------------------------------


def test_resnet18_imported_through_onnx_gives_torch_outputs(resnet):
    module, x, expected, imported = resnet
    assert set(imported.weights) == {k for k in module.state_dict()
                                     if not k.endswith("num_batches_tracked")}
    out = imported.compile()(x)[0]
    np.testing.assert_allclose(out, expected, rtol=RTOL, atol=ATOL)


def test_resnet18_state_dict_maps_onto_the_mskernel_cell(resnet):
    _, x, expected, imported = resnet
    cell = ResNet18()
    cell.set_train(False)
    report = load_torch_state_dict(cell, imported.weights)
    assert report.complete, report
    kinds = {src.rsplit(".", 1)[-1]: how for src, _, how in report.mapped}
    assert kinds["running_var"] == "renamed" and kinds["weight"] in ("same", "renamed")
    assert ("bn1.running_mean", "bn1.moving_mean", "renamed") in report.mapped
    out = cell(mskernel.Tensor(x)).numpy()
    np.testing.assert_allclose(out, expected, rtol=RTOL, atol=ATOL)


def test_a_torch_state_dict_reports_what_has_no_counterpart(resnet):
    module = resnet[0]
    _, report = map_state_dict(module.state_dict(), ResNet18())
    assert not report.missing
    assert set(report.unmapped) == {k for k in module.state_dict()
                                    if k.endswith("num_batches_tracked")}
    assert report.complete
    assert "num_batches_tracked" in str(report)


def test_transformer_imported_through_onnx_gives_torch_outputs(transformer):
    _, ids, expected, imported = transformer
    out = imported.compile()(ids)[0]
    np.testing.assert_allclose(out, expected, rtol=RTOL, atol=ATOL)


def test_transformer_state_dict_maps_onto_the_mskernel_cell(transformer):
    module, ids, expected, _ = transformer
    cell = Transformer()
    cell.set_train(False)
    report = load_torch_state_dict(cell, module.state_dict())
    assert report.complete, report
    assert ("norm.weight", "norm.gamma", "renamed") in report.mapped
    assert ("embed.weight", "embed.embedding_table", "renamed") in report.mapped
    out = cell(mskernel.Tensor(ids)).numpy()
    np.testing.assert_allclose(out, expected, rtol=RTOL, atol=ATOL)


def test_the_report_names_transposed_misfit_and_unknown_entries():
    cell = nn.SequentialCell(nn.Dense(4, 3), nn.BatchNorm1d(3))
    state = {"0.weight": np.zeros((4, 3), np.float32),   # [in, out]: transposed
             "0.bias": np.zeros(5, np.float32),            # wrong size
             "1.weight": np.ones(3, np.float32),
             "2.weight": np.ones(3, np.float32)}           # no such cell
    arrays, report = map_state_dict(state, cell)
    assert ("0.weight", "0.weight", "transposed") in report.mapped
    assert arrays["0.weight"].shape == (3, 4)
    assert "does not fit 0.bias [3]" in report.unmapped["0.bias"]
    assert "no parameter 2.weight" in report.unmapped["2.weight"]
    assert set(report.missing) == {"0.bias", "1.beta", "1.moving_mean", "1.moving_variance"}
    assert not report.complete
