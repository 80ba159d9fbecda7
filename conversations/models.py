"""Models of this app arrive with its issue."""
