"""`python -m cli ...`: the capplan command line."""

from cli import main

main()
