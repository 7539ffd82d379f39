from .convert import to_torch

__all__ = ["to_torch"]
