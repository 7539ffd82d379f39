"""The thin command-line front end of codemod; all logic lives in the engine (``jax_codemod``)."""
