"""The ``edgewise`` command line."""
