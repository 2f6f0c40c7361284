"""The command line: ``main`` (argparse, exit codes), ``commands/`` (one module per sub-command)
and ``render/`` (rich / questionary output). Nothing here imports the Textual app at module
level: the commands that start it import it when they do."""
