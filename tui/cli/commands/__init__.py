"""The sub-commands of `scars`: one module each (HELP, add_arguments(parser), run(args) -> int)."""
