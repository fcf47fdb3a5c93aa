"""Helpers the test suite imports (on pytest's `pythonpath`): what a test does when the shared
data or an outside tool it needs is not on this machine."""
