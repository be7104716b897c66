"""log_softmax's backward over the last dim: torch._log_softmax_backward_data on grad and output [rows, cols]."""

import torch


def call(c, mk):
    g, y = mk.matrix(c.p), mk.matrix(c.p, 1, 4.0)
    return ((lambda g, y: torch._log_softmax_backward_data(g, y, -1, y.dtype)), (g, y),
            "torch._log_softmax_backward_data")
