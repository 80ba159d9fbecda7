"""Models of this family."""
