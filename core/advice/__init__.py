"""Advice beside the human's choice, never instead of it: the convergence monitor's arithmetic
(``trend``) and the dag-iteration-detector rules over any loop's history (``advisor``)."""
