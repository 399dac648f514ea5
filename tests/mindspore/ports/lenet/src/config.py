"""Settings of the LeNet-5 scripts, as the model zoo's ``src/config.py`` has them (there an
``easydict.EasyDict``, a third-party dictionary with attribute access; a SimpleNamespace
here), with eight epochs (160 steps) for the test's small data set."""

from types import SimpleNamespace

mnist_cfg = SimpleNamespace(
    num_classes=10,
    lr=0.01,
    momentum=0.9,
    epoch_size=8,
    batch_size=32,
    buffer_size=1000,
    image_height=32,
    image_width=32,
    save_checkpoint_steps=20,
    keep_checkpoint_max=10,
)
