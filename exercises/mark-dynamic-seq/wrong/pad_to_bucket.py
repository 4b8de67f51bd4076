import torch


def attn_scores(x):                           # x: [B=8, T, D=16]
    s = x @ x.transpose(1, 2) / 4.0
    return s.softmax(-1).sum(1)



def compile_for_serving(fn, example):
    served = torch.compile(fn)
    longest = 512

    def serve(x):                              # one fixed length: pad every request to it, one static graph
        padded = torch.nn.functional.pad(x, (0, 0, 0, longest - x.shape[1]))
        return served(padded)[:, :x.shape[1]].clone()   # the request's own columns

    return serve
