"""Data utilities: sequence packing and load balancing."""
