import jax.numpy as jnp

from agents.base import Agent
from agents.logging_agent import LoggingAgent

assert float(Agent().update(jnp.arange(4.0))) == 2.5  # the base class's own hook traces fine
LoggingAgent().update(jnp.arange(4.0))
