"""`make bench`: the platform's load benchmark (issue 2, "Done means").

`python -m bench.run` prepares PostgreSQL and Redis, starts gunicorn production-style and
loads it with wrk from a second process, one scenario at a time; see bench/run.py.
"""
