"""Small helpers shared by the backends."""
