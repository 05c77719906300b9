"""Golden payload hashes: the exact bytes every layout strategy sends on the bundled traces."""
