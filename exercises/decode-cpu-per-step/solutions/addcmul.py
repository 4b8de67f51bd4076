import torch


def decode_step(x, w, scale):
    for layer in w.unbind(0):
        x = torch.addcmul(x, torch.tanh(torch.mm(x, layer)), scale)
    return x
