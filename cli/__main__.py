import sys

try:
    from jax_codemod.cli.main import entry
except KeyboardInterrupt:  # Ctrl-C while starting up: one line, exit 130, as after
    sys.stderr.write("codemod: interrupted\n")
    sys.exit(130)

entry()
