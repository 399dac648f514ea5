"""Port of MindSpore's tutorial "Training and Evaluation" (docs: tutorials/source_en/advanced/
model/train_eval.md, before it moved), with ``mindspore`` renamed ``mskernel``."""

import mskernel.dataset as ds
import numpy as np


def get_data(num, w=2.0, b=3.0):
    for _ in range(num):
        x = np.random.uniform(-10.0, 10.0)
        noise = np.random.normal(0, 1)
        y = x * w + b + noise
        yield np.array([x]).astype(np.float32), np.array([y]).astype(np.float32)


def create_dataset(num_data, batch_size=16):
    dataset = ds.GeneratorDataset(list(get_data(num_data)), column_names=['data', 'label'])
    dataset = dataset.batch(batch_size)
    return dataset


import mskernel.nn as nn
from mskernel.common.initializer import Normal


class LinearNet(nn.Cell):
    def __init__(self):
        super().__init__()
        self.fc = nn.Dense(1, 1, Normal(0.02), Normal(0.02))

    def construct(self, x):
        return self.fc(x)


train_dataset = create_dataset(num_data=160, batch_size=16)

net = LinearNet()
loss = nn.MSELoss()

net_with_loss = nn.WithLossCell(net, loss)
opt = nn.Momentum(net.trainable_params(), learning_rate=0.005, momentum=0.9)

train_net = nn.TrainOneStepCell(net_with_loss, opt)
train_net.set_train()

step = 0
epochs = 2
steps = train_dataset.get_dataset_size()

for epoch in range(epochs):
    for d in train_dataset.create_dict_iterator():
        result = train_net(d["data"], d["label"])
        print(f"Epoch: [{epoch} / {epochs}], "
              f"step: [{step} / {steps}], "
              f"loss: {result}")
        step = step + 1

eval_dataset = create_dataset(num_data=160, batch_size=16)

eval_net = nn.WithEvalCell(net, loss)
eval_net.set_train(False)
loss = nn.Loss()
mae = nn.MAE()

mae.clear()
loss.clear()

for data in eval_dataset.create_dict_iterator():
    outputs = eval_net(data["data"], data["label"])
    mae.update(outputs[1], outputs[2])
    loss.update(outputs[0])

mae_result = mae.eval()
loss_result = loss.eval()

print("mae: ", mae_result)
print("loss: ", loss_result)

import mskernel.ops as ops


class CustomTrainOneStepCell(nn.Cell):
    def __init__(self, network, optimizer):
        super(CustomTrainOneStepCell, self).__init__(auto_prefix=False)
        self.network = network
        self.network.set_grad()
        self.optimizer = optimizer
        self.weights = self.optimizer.parameters
        self.grad = ops.GradOperation(get_by_list=True)

    def construct(self, *inputs):
        loss = self.network(*inputs)
        grads = self.grad(self.network, self.weights)(*inputs)
        self.optimizer(grads)
        return loss


net1 = LinearNet()
loss = nn.MSELoss()

net_with_loss = nn.WithLossCell(net1, loss)
opt = nn.Momentum(net1.trainable_params(), learning_rate=0.005, momentum=0.9)

train_net = CustomTrainOneStepCell(net_with_loss, opt)
train_net.set_train()

step = 0
epochs = 2
steps = train_dataset.get_dataset_size()
for epoch in range(epochs):
    for d in train_dataset.create_dict_iterator():
        result = train_net(d["data"], d["label"])
        print(f"Epoch: [{epoch} / {epochs}], "
              f"step: [{step} / {steps}], "
              f"loss: {result}")
        step = step + 1


class CustomWithEvalCell(nn.Cell):
    def __init__(self, network):
        super(CustomWithEvalCell, self).__init__(auto_prefix=False)
        self.network = network

    def construct(self, data, label1, label2):
        outputs = self.network(data)
        return outputs, label1, label2


custom_eval_net = CustomWithEvalCell(net)
custom_eval_net.set_train(False)

net = LinearNet()
loss = nn.MSELoss()
net_with_loss = nn.WithLossCell(net, loss)
opt = nn.Adam(params=net.trainable_params())

train_net = nn.TrainOneStepCell(net_with_loss, opt)
train_net.set_train()

eval_net = nn.WithEvalCell(net, loss)
eval_net.set_train(False)

train_net = nn.TrainOneStepCell(net_with_loss, opt)
train_net.set_train()

net2 = LinearNet()
eval_net = nn.WithEvalCell(net2, loss)
eval_net.set_train(False)
