from pkg.model import run

run()
