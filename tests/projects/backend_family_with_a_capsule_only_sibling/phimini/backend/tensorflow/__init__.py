from ._tf_backend import TFBackend

TENSORFLOW = TFBackend()
