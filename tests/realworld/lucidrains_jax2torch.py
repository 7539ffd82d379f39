# ruff: noqa -- real code, kept in its own style
# source: github.com/lucidrains/jax2torch jax2torch/jax2torch.py
# commit: 83d5a34c52b3b7f1571fa9c5d83b7472acd2811e
# Reproduction, not a copy: the bridging functions re-typed with the same calls, data flow and
# import spellings (this workplace keeps fetched code out of commits); imports reduced to jax/torch.
import jax
import jax.numpy as jnp
import torch
from jax import dlpack as jax_dlpack
from jax.tree_util import tree_map
from torch.utils import dlpack as torch_dlpack


def j2t(x_jax):
    x_torch = torch_dlpack.from_dlpack(jax_dlpack.to_dlpack(x_jax))
    return x_torch


def t2j(x_torch):
    x_torch = x_torch.contiguous()
    x_jax = jax_dlpack.from_dlpack(torch_dlpack.to_dlpack(x_torch))
    return x_jax


def tree_t2j(x_torch):
    return tree_map(lambda t: t2j(t) if isinstance(t, torch.Tensor) else t, x_torch)


def tree_j2t(x_jax):
    return tree_map(lambda t: j2t(t) if isinstance(t, jnp.ndarray) else t, x_jax)


def jax2torch(fun):
    class JaxFun(torch.autograd.Function):
        @staticmethod
        def forward(ctx, *args):
            ctx.num_args = len(args)
            args = tree_t2j(args)
            y_, ctx.fun_vjp = jax.vjp(fun, *args)
            return tree_j2t(y_)

        @staticmethod
        def backward(ctx, grad_y):
            grads, *_ = ctx.fun_vjp(t2j(grad_y))
            return tree_j2t(grads), *((None,) * (ctx.num_args - 1))

    return JaxFun.apply
