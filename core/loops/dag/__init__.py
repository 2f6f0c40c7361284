"""The dag loop: its reader (``reader``) and its gates (``gates``)."""
