from .host import summarize, to_host
