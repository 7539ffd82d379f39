"""codemod driven by other tools (all-repos); each integration needs its own optional extra."""
