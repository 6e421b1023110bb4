"""Workflows: the use cases the CLI and the app both call, each one function over typed inputs and
outputs (ingest, planning, plan history, probe). The shells (cli/, ui/) read flags or widgets,
make one call here, and print or draw what comes back.
"""
