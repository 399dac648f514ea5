"""Port of MindSpore's tutorial "Callback Mechanism" (docs: tutorials/source_en/advanced/
model/callback.md, before it moved), with ``mindspore`` renamed ``mskernel``; the MNIST
download is the ``MNIST_Data`` folder the test writes, StopTimeMonitor's limit is 0 seconds
(it stops after the first step, whatever the machine's speed) and SaveCkptMonitor's loss
threshold suits that data."""

import mskernel
from mskernel import nn
from mskernel.dataset import vision, transforms
from mskernel.dataset import MnistDataset
from mskernel.train import Model


def datapipe(path, batch_size):
    image_transforms = [
        vision.Rescale(1.0 / 255.0, 0),
        vision.Normalize(mean=(0.1307,), std=(0.3081,)),
        vision.HWC2CHW()
    ]
    label_transform = transforms.TypeCast(mskernel.int32)

    dataset = MnistDataset(path)
    dataset = dataset.map(image_transforms, 'image')
    dataset = dataset.map(label_transform, 'label')
    dataset = dataset.batch(batch_size)
    return dataset


class Network(nn.Cell):
    def __init__(self):
        super().__init__()
        self.flatten = nn.Flatten()
        self.dense_relu_sequential = nn.SequentialCell(
            nn.Dense(28*28, 512),
            nn.ReLU(),
            nn.Dense(512, 512),
            nn.ReLU(),
            nn.Dense(512, 10)
        )

    def construct(self, x):
        x = self.flatten(x)
        logits = self.dense_relu_sequential(x)
        return logits


model = Network()
loss_fn = nn.CrossEntropyLoss()
optimizer = nn.SGD(model.trainable_params(), 1e-2)

train_dataset = datapipe('MNIST_Data/train', 64)
test_dataset = datapipe('MNIST_Data/test', 64)

trainer = Model(model, loss_fn=loss_fn, optimizer=optimizer, metrics={'accuracy'})

from mskernel.train import CheckpointConfig, ModelCheckpoint

config = CheckpointConfig(save_checkpoint_steps=1875, keep_checkpoint_max=10)
ckpt_callback = ModelCheckpoint(prefix="mnist", directory="./checkpoint", config=config)
trainer.train(1, train_dataset, callbacks=[ckpt_callback])

from mskernel.train import LossMonitor

loss_monitor = LossMonitor(300)
trainer.train(1, train_dataset, callbacks=[loss_monitor])

trainer.fit(1, train_dataset, test_dataset, callbacks=[loss_monitor])

from mskernel.train import TimeMonitor

time_monitor = TimeMonitor()
trainer.train(1, train_dataset, callbacks=[time_monitor])

import time
import mskernel as ms


class StopTimeMonitor(ms.train.Callback):

    def __init__(self, run_time):
        super(StopTimeMonitor, self).__init__()
        self.run_time = run_time

    def on_train_begin(self, run_context):
        cb_params = run_context.original_args()
        cb_params.init_time = time.time()
        print(f"Begin training, time is: {cb_params.init_time}")

    def on_train_step_end(self, run_context):
        cb_params = run_context.original_args()
        epoch_num = cb_params.cur_epoch_num
        step_num = cb_params.cur_step_num
        loss = cb_params.net_outputs
        cur_time = time.time()

        if (cur_time - cb_params.init_time) > self.run_time:
            print(f"End training, time: {cur_time}, epoch: {epoch_num}, step: {step_num}, loss:{loss}")
            run_context.request_stop()


datasize = train_dataset.get_dataset_size()
trainer.train(5, train_dataset, callbacks=[LossMonitor(datasize), StopTimeMonitor(0)])


class SaveCkptMonitor(ms.train.Callback):

    def __init__(self, loss):
        super(SaveCkptMonitor, self).__init__()
        self.loss = loss

    def on_train_step_end(self, run_context):
        cb_params = run_context.original_args()
        cur_loss = cb_params.net_outputs.asnumpy()

        if cur_loss < self.loss:
            file_name = f"./checkpoint/{cb_params.cur_epoch_num}_{cb_params.cur_step_num}.ckpt"
            ms.save_checkpoint(save_obj=cb_params.train_network, ckpt_file_name=file_name)
            print("Saved checkpoint, loss:{:8.7f}, current step num:{:4}.".format(cur_loss, cb_params.cur_step_num))


trainer.train(1, train_dataset, callbacks=[SaveCkptMonitor(2.2)])
