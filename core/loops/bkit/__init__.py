"""The bkit loop: its reader (``reader``) and its gates (``gates``)."""
