"""The engine: discovery, configuration, the per-file pipeline, the runner, the result cache
and the fixer. It returns results and never prints; rendering is the CLI's."""
