import jax


@jax.jit
def step(w, batch):
    logits = batch * w
    return w * 0.5, {"logits": logits, "loss": (logits**2).mean()}
