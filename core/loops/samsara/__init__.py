"""The samsara loop: its reader (``reader``) and its gates (``gates``)."""
