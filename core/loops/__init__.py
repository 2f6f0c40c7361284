"""Readers and rules of the other iteration loops (loop-spec, ARIS/Mechanist, bkit PDCA, DAG)."""
