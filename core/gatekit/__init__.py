"""What every gate shares, below the loops that use it: the gate and answer types and the gates as
data (``catalog``), what a gate shows and the one entry builder (``evidence``), answers files
(``answers``) and the loops' own JSON state files (``state_io``)."""
