from ._backend import Backend, convert, get_backend
