"""The file formats scars reads and writes for the loops: iteration-log.yaml (formats.md §1.5)
and auto-decisions.md (formats.md §1.6), each read and written in one module."""
