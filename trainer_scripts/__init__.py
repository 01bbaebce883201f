"""Runnable training and evaluation scripts."""
