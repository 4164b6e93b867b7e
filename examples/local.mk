# examples/: small real programs, built with -finstrument-functions.
