"""Read side of insights: every figure is one SQL aggregation (see insights/sql.py)."""
