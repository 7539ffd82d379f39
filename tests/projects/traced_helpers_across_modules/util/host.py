import numpy as np


def to_host(x):
    return np.asarray(x)


def normalize(x):
    # No access here: what it returns is computed from its argument, so a tracer in a trace.
    return (x - x.mean()) / (x.std() + 1e-6)


def scaled_host(x, scale=1.0):
    return np.asarray(x) * scale


def summarize(x):
    # A helper's helper: the access is one call further in.
    return float(to_host(x).sum())


class Recorder:
    def __init__(self):
        self.seen = []

    def record(self, value):
        self.seen.append(np.asarray(value))
        return value


class HostMixin:
    def host_copy(self, value):
        return np.asarray(value).copy()
