"""The review loop: its reader (``reader``) and its gates (``gates``)."""
