from .convert import to_numpy, to_torch

__all__ = ["to_numpy", "to_torch"]
