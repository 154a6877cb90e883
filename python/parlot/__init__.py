"""Parlot traces in Python: the reader library's events and summaries as
pandas DataFrames, without a text round trip.

    >>> import parlot
    >>> t = parlot.open("parlot.data")        # a run directory or one process directory
    >>> t.events()                            # one row per event
    >>> t.stats()                             # parlot-read report --by function
    >>> for chunk in t.events(chunk=10**7):   # bounded memory
    ...     ...

Errors in the trace files raise parlot.FormatError (a ValueError) naming the
file and the byte offset; damage the reader can read around (a thread file
cut short) is reported as a parlot.TraceWarning.
"""
from ._parlot import FormatError
from ._trace import Stacks, Trace, TraceWarning, open

__all__ = ["FormatError", "Stacks", "Trace", "TraceWarning", "open"]
