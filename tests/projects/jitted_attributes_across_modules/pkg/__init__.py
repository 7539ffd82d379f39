from .model import center
