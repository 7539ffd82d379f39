from jax_codemod.cli.main import entry

entry()
