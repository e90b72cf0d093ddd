"""Interfaces: the command line, the Python API."""
