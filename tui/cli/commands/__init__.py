"""The sub-commands of `scars`: one module each (add_arguments(parser), run(args) -> int; its summary in cli/main.COMMANDS)."""
