from .host import to_host

__all__ = ["to_host"]
