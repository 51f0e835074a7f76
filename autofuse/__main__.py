"""`python -m autofuse FILE FUNC --arg SHAPE:DTYPE ...`: see autofuse/cli.py."""
from .cli import main

main()
