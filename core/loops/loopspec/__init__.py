"""The loopspec loop: its reader (``reader``) and its gates (``gates``)."""
