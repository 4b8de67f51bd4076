import torch


def decode_step(x, w, scale):
    # "no sync": the scale is copied to the CPU once and multiplied there... a CPU tensor in the graph
    s = scale.cpu()
    for i in range(w.shape[0]):
        x = x + (torch.tanh(x @ w[i]).cpu() * s).to(x.device)
    return x
