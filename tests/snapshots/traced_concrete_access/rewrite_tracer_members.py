# expect: ConcretizationTypeError: tolist
import jax
import jax.numpy as jnp
import numpy as np

SNAPSHOTS = {}


def snapshot(name, value):
    SNAPSHOTS[name] = value


@jax.jit
def normalize(x, eps):
    snapshot("values", x.tolist())
    snapshot("bytes", len(x.tobytes()))
    snapshot("addressable", x.is_fully_addressable)
    snapshot("shards", len(x.global_shards))
    snapshot("deleted", x.is_deleted())
    snapshot("host_sum", float(np.asarray(x).sum()))
    snapshot("as_numpy", x.__array__().dtype.name)
    x.block_until_ready()
    snapshot("sharding", type(x.sharding).__name__)
    snapshot("ready", x.is_ready())
    return x / (jnp.linalg.norm(x) + eps)


x = jnp.array([3.0, 4.0])
out = normalize(x, 1e-6)
assert jnp.allclose(out, x / 5.0)
assert SNAPSHOTS["values"] == [3.0, 4.0]
assert SNAPSHOTS["bytes"] == 8 and SNAPSHOTS["shards"] >= 1
assert SNAPSHOTS["addressable"] is True and SNAPSHOTS["deleted"] is False
assert SNAPSHOTS["host_sum"] == 7.0 and SNAPSHOTS["as_numpy"] == "float32"
assert SNAPSHOTS["sharding"] == "SingleDeviceSharding" and SNAPSHOTS["ready"] is True
