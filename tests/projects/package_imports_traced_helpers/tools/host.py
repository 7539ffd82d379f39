import numpy as np


def to_host(x):
    return np.asarray(x) + 1.0


def summarize(x):
    return float(np.asarray(x).sum())
