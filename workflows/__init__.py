"""Workflows: the use cases the CLI and the app both call, each one function over typed inputs
and outputs. A shell (a Typer command, a Streamlit page) reads its flags or widgets into the
typed input, makes the one call and prints or draws what comes back; nothing here imports
streamlit, typer, ui or cli."""
