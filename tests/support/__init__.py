"""What the test suites share: the operator harness, the local servers as fixtures, builders,
waiters and checkers (README.md in this folder)."""
