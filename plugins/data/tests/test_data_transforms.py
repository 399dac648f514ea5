"""Vision and general transforms, called directly and inside a map."""

import numpy as np
import pytest
import torch
from PIL import Image

from mskernel_data import config
from mskernel_data.api import NumpySlicesDataset, transforms, vision
from mskernel_data.autoaugment import _OPERATIONS, _POLICIES
from mskernel_data.rng import row_rng


def image(rng, h=6, w=8, c=3, dtype=np.uint8):
    return rng.integers(0, 256, (h, w, c)).astype(dtype)


def test_resize_upsampling_matches_torch_bilinear(rng):
    img = rng.random((5, 7, 2)).astype(np.float32)
    ours = vision.Resize((10, 14), vision.Inter.LINEAR)(img)
    theirs = torch.nn.functional.interpolate(torch.from_numpy(img.transpose(2, 0, 1))[None],
                                             size=(10, 14), mode="bilinear",
                                             align_corners=False)[0].numpy().transpose(1, 2, 0)
    np.testing.assert_allclose(ours, theirs, atol=1e-5)


def test_resize_downsampling_matches_torch_antialiased_bilinear(rng):
    img = rng.random((16, 12, 1)).astype(np.float32)
    ours = vision.Resize((8, 6), vision.Inter.BILINEAR)(img)
    theirs = torch.nn.functional.interpolate(torch.from_numpy(img.transpose(2, 0, 1))[None],
                                             size=(8, 6), mode="bilinear", antialias=True,
                                             align_corners=False)[0].numpy().transpose(1, 2, 0)
    np.testing.assert_allclose(ours, theirs, atol=1e-5)


def test_resize_shorter_side_keeps_aspect_and_nearest_repeats_pixels(rng):
    img = image(rng, 4, 6)
    assert vision.Resize(8)(img).shape == (8, 12, 3)
    assert vision.Resize(2)(image(rng, 6, 4)).shape == (3, 2, 3)
    doubled = vision.Resize((8, 12), vision.Inter.NEAREST)(img)
    np.testing.assert_array_equal(doubled, img.repeat(2, 0).repeat(2, 1))
    gray = vision.Resize((2, 3))(img[..., 0])
    assert gray.shape == (2, 3) and gray.dtype == np.uint8


def test_crops_and_padding(rng):
    img = image(rng, 6, 8)
    np.testing.assert_array_equal(vision.CenterCrop((2, 4))(img), img[2:4, 2:6])
    padded_center = vision.CenterCrop(10)(img)
    assert padded_center.shape == (10, 10, 3) and not padded_center[0].any()
    np.testing.assert_array_equal(padded_center[2:8, 1:9], img)
    pad = vision.Pad((1, 2), fill_value=(7, 8, 9))(img)
    assert pad.shape == (10, 10, 3) and pad[0, 0].tolist() == [7, 8, 9]
    np.testing.assert_array_equal(vision.Pad(2, padding_mode=vision.Border.EDGE)(img)[0, 2:-2],
                                  img[0])
    with pytest.raises(ValueError, match="padding"):
        vision.Pad((1, 2, 3))


def test_random_crop_is_a_window_of_the_padded_image(rng):
    img = image(rng, 6, 8)
    crop = vision.RandomCrop(4, padding=2)
    padded = np.pad(img, ((2, 2), (2, 2), (0, 0)))
    for k in range(20):
        out = crop.apply((img,), row_rng(0, 0, (0,), k))[0]
        windows = [padded[t:t + 4, s:s + 4] for t in range(7) for s in range(9)]
        assert any(np.array_equal(out, w) for w in windows)
    with pytest.raises(ValueError, match="pad_if_needed"):
        vision.RandomCrop(10)(img)
    assert vision.RandomCrop(10, pad_if_needed=True)(img).shape == (10, 10, 3)


def test_random_resized_crop_gives_the_size(rng):
    out = vision.RandomResizedCrop(5, scale=(0.5, 1.0))(image(rng, 20, 30))
    assert out.shape == (5, 5, 3) and out.dtype == np.uint8


def test_flips_follow_their_probability(rng):
    img = image(rng)
    assert np.array_equal(vision.RandomHorizontalFlip(1.0)(img), img[:, ::-1])
    assert np.array_equal(vision.RandomVerticalFlip(1.0)(img), img[::-1])
    assert np.array_equal(vision.RandomHorizontalFlip(0.0)(img), img)
    flips = [vision.RandomHorizontalFlip(0.3).apply((img,), row_rng(1, 0, (0,), k))[0]
             for k in range(400)]
    share = np.mean([not np.array_equal(f, img) for f in flips])
    assert 0.22 < share < 0.38


def test_rotation_by_90_degrees_matches_rot90(rng):
    img = image(rng, 4, 6)
    np.testing.assert_array_equal(vision.Rotate(90, expand=True)(img), np.rot90(img))
    square = image(rng, 5, 5, 1)
    np.testing.assert_array_equal(vision.Rotate(-90)(square), np.rot90(square, -1))
    angles = {float(vision.RandomRotation((10, 20)).apply((square,), row_rng(0, 0, (0,), k))[0]
                    .sum()) for k in range(5)}
    assert len(angles) > 1
    filled = vision.Rotate(45, fill_value=255)(np.zeros((9, 9), np.uint8))
    assert filled[0, 0] == 255 and filled[4, 4] == 0


def test_affine_translation_and_identity(rng):
    img = image(rng, 6, 8, 1).astype(np.float32)
    np.testing.assert_array_equal(vision.Affine(0, (0, 0), 1.0, 0)(img), img)
    shifted = vision.Affine(0, (2, 1), 1.0, 0)(img)
    np.testing.assert_array_equal(shifted[1:, 2:], img[:-1, :-2])
    assert not shifted[0].any() and not shifted[:, :2].any()


def test_layout_and_value_conversions(rng):
    img = image(rng, 4, 5)
    chw = vision.HWC2CHW()(img)
    assert chw.shape == (3, 4, 5) and np.array_equal(vision.CHW2HWC()(chw), img)
    assert vision.HWC2CHW()(img[..., 0]).shape == (1, 4, 5)
    tensor = vision.ToTensor()(img)
    assert tensor.dtype == np.float32 and tensor.shape == (3, 4, 5)
    np.testing.assert_allclose(tensor, img.transpose(2, 0, 1) / 255, rtol=1e-6)
    np.testing.assert_allclose(vision.Rescale(1 / 255, -0.5)(img), img / 255 - 0.5, atol=1e-6)
    mean, std = [120.0, 110.0, 100.0], [60.0, 50.0, 40.0]
    np.testing.assert_allclose(vision.Normalize(mean, std)(img), (img - mean) / std, atol=1e-5)
    np.testing.assert_allclose(vision.Normalize(mean, std, is_hwc=False)(chw),
                               (chw - np.reshape(mean, (3, 1, 1))) / np.reshape(std, (3, 1, 1)),
                               atol=1e-5)
    with pytest.raises(ValueError, match="2 means and 2 stds for an image with 3 channels"):
        vision.Normalize([1, 2], [1, 2])(img)


def test_decode_reads_what_pillow_wrote(tmp_path, rng):
    img = image(rng)
    Image.fromarray(img).save(tmp_path / "a.png")
    raw = np.fromfile(tmp_path / "a.png", np.uint8)
    np.testing.assert_array_equal(vision.Decode()(raw), img)


def test_colour_operations(rng):
    img = image(rng, 8, 8)
    np.testing.assert_array_equal(vision.Invert()(img), 255 - img)
    np.testing.assert_array_equal(vision.Posterize(2)(img), img & 0b11000000)
    np.testing.assert_array_equal(vision.Solarize(128)(img), np.where(img >= 128, 255 - img, img))
    assert not vision.AdjustBrightness(0.0)(img).any()
    np.testing.assert_array_equal(vision.AdjustContrast(1.0)(img), img)
    grey = vision.AdjustSaturation(0.0)(img)
    assert np.abs(grey[..., 0].astype(int) - grey[..., 2]).max() <= 1
    stretched = vision.AutoContrast()(img // 4 + 10)
    assert stretched.min() == 0 and stretched.max() == 255
    assert vision.Equalize()(img).shape == img.shape
    with pytest.raises(ValueError, match="uint8"):
        vision.AdjustBrightness(1.5)(img.astype(np.float32))


def test_every_autoaugment_operation_runs(rng):
    used = {name for table in _POLICIES.values() for sub in table for name, _, _ in sub}
    assert used == set(_OPERATIONS)
    img = image(rng, 12, 10)
    for name, (magnitudes, _, apply) in _OPERATIONS.items():
        out = apply(img, float(magnitudes(12, 10)[5]), vision.Inter.NEAREST, 0)
        assert out.shape == img.shape and out.dtype == np.uint8, name


@pytest.mark.parametrize("policy", list(vision.AutoAugmentPolicy))
def test_autoaugment_is_reproducible_per_row(rng, policy):
    img = image(rng, 16, 16)
    op = vision.AutoAugment(policy)
    outs = [op.apply((img,), row_rng(3, 1, (0,), k))[0] for k in range(12)]
    again = [op.apply((img,), row_rng(3, 1, (0,), k))[0] for k in range(12)]
    assert all(np.array_equal(a, b) for a, b in zip(outs, again))
    assert sum(not np.array_equal(o, img) for o in outs) >= 6  # most rows are changed


def test_subpolicies_apply_operations_with_their_probabilities(rng):
    img = image(rng)
    always = vision.RandomSelectSubpolicy([[(vision.Invert(), 1.0), (vision.HWC2CHW(), 1.0)]])
    np.testing.assert_array_equal(always(img), (255 - img).transpose(2, 0, 1))
    never = vision.RandomSelectSubpolicy([[(vision.Invert(), 0.0)]])
    np.testing.assert_array_equal(never(img), img)
    mixed = vision.RandomSelectSubpolicy([[(vision.Invert(), 1.0)], [(vision.Posterize(1), 1.0)]])
    outs = {mixed.apply((img,), row_rng(0, 0, (0,), k))[0].tobytes() for k in range(30)}
    assert len(outs) == 2
    with pytest.raises(ValueError, match=r"prob must lie in \[0, 1\]"):
        vision.RandomSelectSubpolicy([[(vision.Invert(), 1.5)]])


def test_one_hot_matches_torch():
    labels = np.array([[0, 3], [2, 1]])
    expected = torch.nn.functional.one_hot(torch.from_numpy(labels), 4).numpy()
    np.testing.assert_array_equal(transforms.OneHot(4)(labels), expected)
    smooth = transforms.OneHot(4, smoothing_rate=0.2)(labels)
    np.testing.assert_allclose(smooth, expected * 0.8 + 0.05, atol=1e-7)
    assert smooth.dtype == np.float32
    with pytest.raises(ValueError, match=r"\[0, 4\)"):
        transforms.OneHot(4)(np.array([4]))


def test_general_transforms():
    x = np.array([1.7, -2.2])
    assert transforms.TypeCast("int32")(x).dtype == np.int32
    assert transforms.TypeCast(np.float16)(x).dtype == np.float16
    composed = transforms.Compose([lambda v: v * 2, transforms.TypeCast("int64")])
    assert composed(np.array([1.5])).tolist() == [3]
    assert transforms.RandomApply([abs], prob=1.0)(x).tolist() == [1.7, 2.2]
    assert transforms.RandomApply([abs], prob=0.0)(x).tolist() == x.tolist()
    choice = transforms.RandomChoice([abs, np.negative])
    firsts = {choice.apply((x,), row_rng(0, 0, (0,), k))[0][0] for k in range(20)}
    assert firsts == {1.7, -1.7}


def test_eager_random_transforms_follow_the_seed(rng):
    img = image(rng, 10, 10)
    config.set_seed(5)
    a = [vision.RandomCrop(4)(img) for _ in range(3)]
    config.set_seed(5)
    b = [vision.RandomCrop(4)(img) for _ in range(3)]
    assert all(np.array_equal(x, y) for x, y in zip(a, b))
    assert not all(np.array_equal(a[0], x) for x in a[1:])


def test_transforms_in_a_map_accept_pillow_images_and_report_bad_input(rng):
    ds = NumpySlicesDataset(image(rng, 8, 8)[None].repeat(3, 0), shuffle=False)
    out = ds.map([lambda im: Image.fromarray(im), vision.Resize((4, 4))])
    assert out.output_shapes() == [[4, 4, 3]]
    with pytest.raises(Exception, match="takes one image column, got 2"):
        vision.Resize(4).apply((1, 2), None)
