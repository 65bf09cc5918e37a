"""`hopforge view`: read a build in a browser (a local server, or a static copy)."""
