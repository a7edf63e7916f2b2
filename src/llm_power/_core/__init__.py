"""What every layer may import (it imports nothing else of the package): validation (every
``check_*``), the one cluster-label coder, result base classes, the option tuples of the command
line, formatting and progress.
"""
