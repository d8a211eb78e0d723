from evalkit.entry_point import run

run()
