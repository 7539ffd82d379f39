"""The thin command-line front end of codemod; all logic lives in ``codemods``."""
